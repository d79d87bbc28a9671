/** How one provider call failed, in the terms fallback and the exhausted-candidates rule need. */
export type ProviderFailure = 'rate_limited' | 'timeout' | 'unavailable' | 'bad_request' | 'invalid_response' | 'auth' | 'cancelled';

export class ProviderError extends Error {
  readonly failure: ProviderFailure;
  /** Upstream HTTP status when there was one. */
  readonly status?: number;
  /** Seconds the provider asked to wait (its retry-after header), when it said. */
  readonly retryAfterSeconds?: number;

  constructor(failure: ProviderFailure, message: string, status?: number, retryAfterSeconds?: number) {
    super(message);
    this.name = 'ProviderError';
    this.failure = failure;
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Classify an upstream HTTP error status. 408/409/5xx and unknown statuses count as unavailable. */
export function failureFromStatus(status: number): ProviderFailure {
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'auth';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 400 || status === 404 || status === 413 || status === 422) return 'bad_request';
  return 'unavailable';
}

/** A retry-after header (seconds, or an HTTP date) as whole seconds from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text.trim())) return Math.max(0, Math.ceil(Number(text)));
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
