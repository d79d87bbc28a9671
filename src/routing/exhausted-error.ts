import type { ErrorCode } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { ProviderFailure } from '../providers/provider-error.ts';
import type { Attempt } from './attempt.ts';

const CODE_BY_FAILURE: Record<Exclude<ProviderFailure, 'cancelled'>, ErrorCode> = {
  rate_limited: 'provider_rate_limited',
  timeout: 'provider_timeout',
  unavailable: 'provider_unavailable',
  bad_request: 'provider_bad_request',
  invalid_response: 'provider_invalid_response',
  auth: 'provider_auth_error',
};

export function codeForFailure(failure: Exclude<ProviderFailure, 'cancelled'>): ErrorCode {
  return CODE_BY_FAILURE[failure];
}

/** When all were rate-limited: the soonest any provider said it would take requests again. */
const DEFAULT_RETRY_AFTER_SECONDS = 2;

function retryAfter(failed: Attempt[]): number {
  const said = failed.map((attempt) => attempt.retryAfterSeconds).filter((seconds): seconds is number => seconds !== undefined);
  return Math.max(1, said.length ? Math.min(...said) : DEFAULT_RETRY_AFTER_SECONDS);
}

/**
 * The one error after every candidate failed: the shared code when all failed the same way,
 * otherwise provider_unavailable. The message lists each candidate's outcome.
 */
export function exhaustedError(attempts: Attempt[]): GatewayError {
  const failed = attempts.filter((attempt) => attempt.outcome === 'failed');
  if (failed.length === 0) return allCooling(attempts);
  const codes = new Set(failed.map((attempt) => attempt.errorCode));
  const [only] = codes;
  const code = codes.size === 1 && only ? only : 'provider_unavailable';
  const outcomes = failed.map((attempt) => `${attempt.model}: ${attempt.errorCode} (${attempt.detail ?? 'no detail'})`).join('; ');
  const lead = failed.length === 1 ? 'The model failed' : `All ${failed.length} candidate models failed`;
  return new GatewayError(code, `${lead}: ${outcomes}`, code === 'provider_rate_limited' ? { 'retry-after': String(retryAfter(failed)) } : {});
}

/** No candidate was called: each is cooling down after failures of its own. Retry once the first one may be probed. */
function allCooling(attempts: Attempt[]): GatewayError {
  const cooling = attempts.filter((attempt) => attempt.outcome === 'skipped' && attempt.errorCode === 'provider_unavailable');
  const outcomes = cooling.map((attempt) => `${attempt.model}: ${attempt.detail}`).join('; ');
  return new GatewayError('provider_unavailable', `No candidate model is available right now: ${outcomes}`, {
    'retry-after': String(retryAfter(cooling)),
  });
}
