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

/**
 * What a route does that can fail with a code. A route's codes are those of what it does
 * (errorCodesOf): the OpenAPI document lists them per operation from here.
 */
export type ErrorCause =
  | 'key' // takes an API key
  | 'scope' // needs a scope of the key
  | 'input' // reads a body, query or path
  | 'model' // names a model or alias
  | 'key_models' // the key may be limited to some models
  | 'routing' // picks among candidates (routing.allowed_models, capabilities)
  | 'hold' // holds money before it runs
  | 'rate' // counts against the key's rate limit
  | 'availability' // needs a model that is up
  | 'provider' // waits on a provider's answer
  | 'context' // counts a prompt against a context window
  | 'lookup' // finds a stored object by id
  | 'quote' // runs a quote
  | 'outcome' // never an HTTP status: how a fix run ended (its error.code)
  | 'console' // the console's own
  | 'any';

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
  cause: ErrorCause;
}

const spec = (status: number, retryable: boolean, type: string, anthropicType: string, cause: ErrorCause): ErrorSpec => ({
  status,
  retryable,
  type,
  anthropicType,
  cause,
});

export const errorCatalog: Record<ErrorCode, ErrorSpec> = {
  invalid_api_key: spec(401, false, 'authentication_error', 'authentication_error', 'key'),
  key_revoked: spec(401, false, 'authentication_error', 'authentication_error', 'key'),
  key_expired: spec(401, false, 'authentication_error', 'authentication_error', 'key'),
  invalid_request: spec(400, false, 'invalid_request_error', 'invalid_request_error', 'input'),
  unsupported_model: spec(400, false, 'invalid_request_error', 'invalid_request_error', 'model'),
  unsupported_parameter: spec(400, false, 'invalid_request_error', 'invalid_request_error', 'routing'),
  model_not_allowed: spec(403, false, 'permission_error', 'permission_error', 'key_models'),
  insufficient_scope: spec(403, false, 'permission_error', 'permission_error', 'scope'),
  insufficient_balance: spec(402, false, 'insufficient_quota', 'billing_error', 'hold'),
  budget_exceeded: spec(402, false, 'insufficient_quota', 'billing_error', 'hold'),
  cost_cap_reached: spec(402, false, 'insufficient_quota', 'billing_error', 'outcome'),
  rate_limit_exceeded: spec(429, true, 'rate_limit_error', 'rate_limit_error', 'rate'),
  not_found: spec(404, false, 'not_found_error', 'not_found_error', 'lookup'),
  quote_expired: spec(410, false, 'invalid_request_error', 'invalid_request_error', 'quote'),
  context_too_large: spec(413, false, 'invalid_request_error', 'request_too_large', 'context'),
  provider_rate_limited: spec(429, true, 'rate_limit_error', 'rate_limit_error', 'provider'),
  provider_timeout: spec(504, true, 'api_error', 'timeout_error', 'provider'),
  provider_unavailable: spec(503, true, 'api_error', 'overloaded_error', 'availability'),
  provider_bad_request: spec(400, false, 'invalid_request_error', 'invalid_request_error', 'provider'),
  provider_invalid_response: spec(502, true, 'api_error', 'api_error', 'provider'),
  provider_auth_error: spec(502, false, 'api_error', 'api_error', 'provider'),
  request_cancelled: spec(499, false, 'api_error', 'api_error', 'provider'),
  internal_error: spec(500, true, 'api_error', 'api_error', 'any'),
  session_required: spec(401, false, 'authentication_error', 'authentication_error', 'console'),
  sign_in_refused: spec(401, false, 'authentication_error', 'authentication_error', 'console'),
  not_a_member: spec(403, false, 'permission_error', 'permission_error', 'console'),
  owner_only: spec(403, false, 'permission_error', 'permission_error', 'console'),
  csrf_failed: spec(403, false, 'permission_error', 'permission_error', 'console'),
};

/** The codes a route that does `causes` may answer with, in catalog order; internal_error always. */
export function errorCodesOf(causes: readonly ErrorCause[]): ErrorCode[] {
  return (Object.keys(errorCatalog) as ErrorCode[]).filter((code) => {
    const { cause } = errorCatalog[code];
    return cause === 'any' || causes.includes(cause);
  });
}
