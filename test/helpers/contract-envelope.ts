import { errorCatalog, type ErrorCode } from '../../src/errors/catalog.ts';
import type { RawResponse } from './raw-http.ts';

/** The console's own codes: the catalog has them, the API (/v1) never answers with them. */
const CONSOLE_ONLY = new Set<string>(['session_required', 'sign_in_refused', 'not_a_member', 'owner_only', 'csrf_failed']);

/** Statuses HTTP says more precisely than the code's own (a body or a header section too large). */
const STATUS_OVERRIDES: Partial<Record<ErrorCode, number[]>> = { invalid_request: [413, 431] };

export interface EnvelopeFacts {
  code: ErrorCode;
  message: string;
}

/**
 * Why `response` is not the contract's error envelope (null when it is): valid JSON, a known
 * code with the catalog's status and retryability, the type of its wire format, and the
 * request id of the x-svc-request-id header. Both renderings (OpenAI and Anthropic) carry these.
 */
export function envelopeProblem(response: RawResponse, options: { consoleRoute: boolean }): string | null {
  let body: any;
  try {
    body = JSON.parse(response.body);
  } catch {
    return `the body is not JSON: ${JSON.stringify(response.body.slice(0, 200))}`;
  }
  const error = body?.error;
  if (typeof error !== 'object' || error === null) return `no error object: ${response.body.slice(0, 300)}`;
  const code = error.code as ErrorCode;
  const spec = Object.hasOwn(errorCatalog, code) ? errorCatalog[code] : undefined;
  if (!spec) return `unknown error.code ${JSON.stringify(error.code)}`;
  if (!options.consoleRoute && CONSOLE_ONLY.has(code)) return `the console's code ${code} on an API route`;
  if (response.status !== spec.status && !(STATUS_OVERRIDES[code] ?? []).includes(response.status)) {
    return `status ${response.status} for ${code}, the catalog says ${spec.status}`;
  }
  if (typeof error.message !== 'string' || error.message === '') return 'error.message is not a non-empty string';
  if (error.retryable !== spec.retryable) return `error.retryable ${error.retryable} for ${code}, the catalog says ${spec.retryable}`;
  const anthropic = body.type === 'error';
  const expectedType = anthropic ? spec.anthropicType : spec.type;
  if (error.type !== expectedType) return `error.type ${JSON.stringify(error.type)} for ${code}, expected ${expectedType}`;
  const header = response.headers['x-svc-request-id'];
  if (typeof error.request_id !== 'string' || !/^req_[\w-]+$/.test(error.request_id)) return `error.request_id ${JSON.stringify(error.request_id)}`;
  if (error.request_id !== header) return `error.request_id ${error.request_id} differs from x-svc-request-id ${String(header)}`;
  if (anthropic && body.request_id !== error.request_id) return 'the Anthropic body names another request id';
  if (!String(response.headers['content-type'] ?? '').startsWith('application/json')) return `content-type ${response.headers['content-type']}`;
  if (code === 'rate_limit_exceeded' && !/^\d+$/.test(String(response.headers['retry-after']))) return 'rate_limit_exceeded without retry-after';
  return null;
}

/** The code and message of an envelope already checked by envelopeProblem. */
export function envelopeFacts(response: RawResponse): EnvelopeFacts {
  const error = JSON.parse(response.body).error;
  return { code: error.code, message: error.message };
}

/** Why an error event inside a stream (`{"error": {...}}`, OpenAI's or Anthropic's) is not the envelope's fields, or null. */
export function streamedErrorProblem(payload: unknown, requestId: unknown): string | null {
  const error = (payload as { error?: unknown } | null)?.error;
  if (typeof error !== 'object' || error === null) return null;
  const { code, retryable, request_id: id, message } = error as Record<string, unknown>;
  const spec = typeof code === 'string' && Object.hasOwn(errorCatalog, code) ? errorCatalog[code as ErrorCode] : undefined;
  if (!spec) return `a streamed error with an unknown code ${JSON.stringify(code)}`;
  if (retryable !== spec.retryable) return `a streamed ${code} with retryable ${String(retryable)}`;
  if (typeof message !== 'string' || message === '') return `a streamed ${code} without a message`;
  if (id !== requestId) return `a streamed ${code} naming request ${String(id)}, not ${String(requestId)}`;
  return null;
}
