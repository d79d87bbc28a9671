import { GatewayError } from '../errors/gateway-error.ts';
import type { ModelConfig } from '../config/schema.ts';
import type { ChatResult } from '../canonical/chat-result.ts';
import type { StreamPart } from '../canonical/stream-part.ts';
import type { ProviderAdapter, ProviderCall } from '../providers/provider.ts';
import { ProviderError } from '../providers/provider-error.ts';
import type { Attempt } from './attempt.ts';
import { codeForFailure, exhaustedError } from './exhausted-error.ts';
import type { ModelHealth } from './model-health.ts';

export interface CandidateCaller {
  /** The adapter serving a model. */
  providerFor(model: ModelConfig): ProviderAdapter;
  /** The provider call for a model (reasoning and output cap resolved for it). */
  callFor(model: ModelConfig): ProviderCall;
  /** Every attempt is appended here as it ends, so the receipt has them even on cancellation. */
  attempts: Attempt[];
  signal: AbortSignal;
  /** Told of every call's outcome, when given. */
  health?: ModelHealth;
}

function cancelled(): GatewayError {
  return new GatewayError('request_cancelled', 'The client closed the connection.');
}

function recordFailure(caller: CandidateCaller, model: ModelConfig, error: unknown, started: number): void {
  const latencyMs = Date.now() - started;
  if (caller.signal.aborted || !(error instanceof ProviderError) || error.failure === 'cancelled') caller.health?.probeEnded(model.id);
  if (caller.signal.aborted) {
    caller.attempts.push({ model: model.id, outcome: 'cancelled', errorCode: 'request_cancelled', latencyMs });
    throw cancelled();
  }
  if (!(error instanceof ProviderError) || error.failure === 'cancelled') {
    // Not a provider failure we understand: a bug. Do not hide it behind fallback.
    caller.attempts.push({ model: model.id, outcome: 'failed', errorCode: 'internal_error', latencyMs });
    throw error;
  }
  caller.health?.failed(model.id, error.failure, error.retryAfterSeconds);
  const attempt: Attempt = { model: model.id, outcome: 'failed', errorCode: codeForFailure(error.failure), detail: error.message, latencyMs };
  if (error.retryAfterSeconds !== undefined) attempt.retryAfterSeconds = error.retryAfterSeconds;
  caller.attempts.push(attempt);
}

/**
 * Whether to call `model`; a cooled-down one is listed as skipped instead. A client gone meanwhile
 * (the admission may wait on Redis) is not worth a call: the provider never sees the request.
 */
async function admitted(caller: CandidateCaller, model: ModelConfig): Promise<boolean> {
  if (!caller.health) return true;
  const admission = await caller.health.admit(model.id);
  if (caller.signal.aborted) throw cancelled();
  if (admission.call) return true;
  const until = new Date(admission.until).toISOString();
  caller.attempts.push({
    model: model.id,
    outcome: 'skipped',
    errorCode: 'provider_unavailable',
    detail: `${admission.reason}; skipped until ${until}`,
    retryAfterSeconds: Math.max(1, Math.ceil((admission.until - Date.now()) / 1000)),
    latencyMs: 0,
  });
  return false;
}

/** Non-streaming: try each candidate in order until one answers. */
export async function generateWithFallback(candidates: ModelConfig[], caller: CandidateCaller): Promise<{ model: ModelConfig; result: ChatResult }> {
  for (const model of candidates) {
    if (!(await admitted(caller, model))) continue;
    const started = Date.now();
    try {
      const result = await caller.providerFor(model).generate(caller.callFor(model));
      caller.health?.succeeded(model.id);
      caller.attempts.push({ model: model.id, outcome: 'succeeded', latencyMs: Date.now() - started });
      return { model, result };
    } catch (error) {
      recordFailure(caller, model, error, started);
    }
  }
  throw exhaustedError(caller.attempts);
}

export interface OpenedStream {
  model: ModelConfig;
  first: StreamPart;
  rest: AsyncIterator<StreamPart>;
  /** When the attempt began (for time to first token). */
  startedAt: number;
}

/**
 * Streaming: try candidates until one yields its first part. After that the stream is
 * committed to that model; later failures are the caller's to report (no fallback).
 */
export async function openStreamWithFallback(candidates: ModelConfig[], caller: CandidateCaller): Promise<OpenedStream> {
  for (const model of candidates) {
    if (!(await admitted(caller, model))) continue;
    const startedAt = Date.now();
    try {
      const iterator = caller.providerFor(model).stream(caller.callFor(model))[Symbol.asyncIterator]();
      const first = await iterator.next();
      if (first.done) throw new ProviderError('invalid_response', 'the provider ended the stream without any content');
      caller.health?.succeeded(model.id);
      return { model, first: first.value, rest: iterator, startedAt };
    } catch (error) {
      recordFailure(caller, model, error, startedAt);
    }
  }
  throw exhaustedError(caller.attempts);
}
