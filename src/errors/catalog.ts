/** Every stable error code of the contract, with its HTTP status, retryability and type per wire format. */

export type ErrorCode =
  | 'invalid_api_key'
  | 'key_revoked'
  | 'key_expired'
  | 'invalid_request'
  | 'unsupported_model'
  | 'unsupported_parameter'
  | 'model_not_allowed'
  | 'insufficient_scope'
  | 'insufficient_balance'
  | 'budget_exceeded'
  | 'cost_cap_reached'
  | 'rate_limit_exceeded'
  | 'not_found'
  | 'quote_expired'
  | 'context_too_large'
  | 'provider_rate_limited'
  | 'provider_timeout'
  | 'provider_unavailable'
  | 'provider_bad_request'
  | 'provider_invalid_response'
  | 'provider_auth_error'
  | 'request_cancelled'
  | 'internal_error'
  // The console's own (never on /v1):
  | 'session_required'
  | 'sign_in_refused'
  | 'not_a_member'
  | 'owner_only'
  | 'csrf_failed';

export interface ErrorSpec {
  status: number;
  retryable: boolean;
  /** OpenAI-style error.type. */
  type: string;
  /**
   * Anthropic-style error.type, for the /v1/messages route: the type Anthropic's API sends with
   * the same status (https://docs.anthropic.com/en/api/errors).
   */
  anthropicType: string;
}

const spec = (status: number, retryable: boolean, type: string, anthropicType: string): ErrorSpec => ({
  status,
  retryable,
  type,
  anthropicType,
});

export const errorCatalog: Record<ErrorCode, ErrorSpec> = {
  invalid_api_key: spec(401, false, 'authentication_error', 'authentication_error'),
  key_revoked: spec(401, false, 'authentication_error', 'authentication_error'),
  key_expired: spec(401, false, 'authentication_error', 'authentication_error'),
  invalid_request: spec(400, false, 'invalid_request_error', 'invalid_request_error'),
  unsupported_model: spec(400, false, 'invalid_request_error', 'invalid_request_error'),
  unsupported_parameter: spec(400, false, 'invalid_request_error', 'invalid_request_error'),
  model_not_allowed: spec(403, false, 'permission_error', 'permission_error'),
  insufficient_scope: spec(403, false, 'permission_error', 'permission_error'),
  insufficient_balance: spec(402, false, 'insufficient_quota', 'billing_error'),
  budget_exceeded: spec(402, false, 'insufficient_quota', 'billing_error'),
  cost_cap_reached: spec(402, false, 'insufficient_quota', 'billing_error'),
  rate_limit_exceeded: spec(429, true, 'rate_limit_error', 'rate_limit_error'),
  not_found: spec(404, false, 'not_found_error', 'not_found_error'),
  quote_expired: spec(410, false, 'invalid_request_error', 'invalid_request_error'),
  context_too_large: spec(413, false, 'invalid_request_error', 'request_too_large'),
  provider_rate_limited: spec(429, true, 'rate_limit_error', 'rate_limit_error'),
  provider_timeout: spec(504, true, 'api_error', 'timeout_error'),
  provider_unavailable: spec(503, true, 'api_error', 'overloaded_error'),
  provider_bad_request: spec(400, false, 'invalid_request_error', 'invalid_request_error'),
  provider_invalid_response: spec(502, true, 'api_error', 'api_error'),
  provider_auth_error: spec(502, false, 'api_error', 'api_error'),
  request_cancelled: spec(499, false, 'api_error', 'api_error'),
  internal_error: spec(500, true, 'api_error', 'api_error'),
  session_required: spec(401, false, 'authentication_error', 'authentication_error'),
  sign_in_refused: spec(401, false, 'authentication_error', 'authentication_error'),
  not_a_member: spec(403, false, 'permission_error', 'permission_error'),
  owner_only: spec(403, false, 'permission_error', 'permission_error'),
  csrf_failed: spec(403, false, 'permission_error', 'permission_error'),
};
