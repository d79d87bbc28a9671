/** How one provider call failed, in the terms fallback and the exhausted-candidates rule need. */
export type ProviderFailure =
  | 'rate_limited'
  | 'timeout'
  | 'unavailable'
  | 'bad_request'
  | 'invalid_response'
  | 'auth'
  | 'cancelled';

export class ProviderError extends Error {
  readonly failure: ProviderFailure;
  /** Upstream HTTP status when there was one. */
  readonly status?: number;

  constructor(failure: ProviderFailure, message: string, status?: number) {
    super(message);
    this.name = 'ProviderError';
    this.failure = failure;
    this.status = status;
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
