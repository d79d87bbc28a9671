import type { ErrorCode } from '../errors/catalog.ts';

/** One candidate's outcome: a call made, or a candidate skipped without one. The receipt keeps them all. */
export interface Attempt {
  model: string;
  outcome: 'succeeded' | 'failed' | 'skipped' | 'cancelled';
  errorCode?: ErrorCode;
  /** What the provider said, without secrets; for the receipt reader. */
  detail?: string;
  /** Seconds the provider asked to wait before a retry, when it said. */
  retryAfterSeconds?: number;
  latencyMs: number;
  /** A fix run's step the call belonged to. */
  step?: number;
  /** What the call cost, for requests that make several (fix runs). */
  costNano?: number;
}
