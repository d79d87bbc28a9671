import { formatUsd } from '../lib/money.ts';
import type { ReceiptRecord } from '../storage/records.ts';
import type { Receipt } from './receipt-schema.ts';

/** A receipt as the API returns it: snake_case, USD as decimal strings, prices per 1M tokens. */
export function renderReceipt(receipt: ReceiptRecord): Receipt {
  return {
    id: receipt.id,
    object: 'receipt',
    request_id: receipt.requestId,
    created_at: receipt.createdAt,
    status: receipt.status,
    endpoint: receipt.endpoint,
    stream: receipt.stream,
    key: { id: receipt.keyId, prefix: receipt.keyPrefix },
    requested_model: receipt.requestedModel,
    model: receipt.answeringModel,
    attempts: receipt.attempts.map((attempt) => ({
      model: attempt.model,
      outcome: attempt.outcome,
      error_code: attempt.errorCode ?? null,
      detail: attempt.detail ?? null,
      latency_ms: attempt.latencyMs,
      ...(attempt.step === undefined ? {} : { step: attempt.step }),
      ...(attempt.costNano === undefined ? {} : { cost: formatUsd(attempt.costNano) }),
    })),
    warnings: receipt.warnings,
    usage: receipt.usage && {
      prompt_tokens: receipt.usage.inputTokens,
      cached_tokens: receipt.usage.cachedInputTokens,
      cache_write_tokens: receipt.usage.cacheWriteTokens,
      completion_tokens: receipt.usage.outputTokens,
      reasoning_tokens: receipt.usage.reasoningTokens,
    },
    usage_estimated: receipt.usageEstimated,
    prices_per_million_tokens: receipt.prices && {
      input: formatUsd(receipt.prices.inputNanoPerMillion),
      cached_input: formatUsd(receipt.prices.cachedInputNanoPerMillion),
      cache_write: formatUsd(receipt.prices.cacheWriteNanoPerMillion),
      output: formatUsd(receipt.prices.outputNanoPerMillion),
    },
    hold: formatUsd(receipt.holdNano),
    cost: formatUsd(receipt.costNano),
    // The provider reported more than the worst case allowed for: charged in full all the same.
    exceeded_hold: receipt.costNano > receipt.holdNano,
    latency_ms: receipt.latencyMs,
    time_to_first_token_ms: receipt.timeToFirstTokenMs,
    error_code: receipt.errorCode,
  };
}
