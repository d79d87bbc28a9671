import type { HoldRecord, ReceiptRecord } from './records.ts';

/**
 * The receipt written for a request whose process died before it settled: failed, charged the
 * estimate recorded on its hold (usage_estimated).
 *
 * Why a hold means "the provider was called": a request holds its worst case immediately before
 * its first provider call (nothing that can fail runs between the two), and a request refused
 * before any call holds nothing at all, so it never has an orphan and stays at cost 0 on its own
 * receipt. A hold left without a receipt is therefore a request whose provider was called (or was
 * about to be, within the same turn of the event loop): it is charged the prompt's input at the
 * first candidate's price, which the provider charges for a call that was made, and never the
 * output, which nobody saw. A fix run's hold carries its first step's prompt the same way
 * (worst-case.ts estimatedFixCallCost); a hold placed without an estimate stays at cost 0.
 */
export function orphanReceipt(hold: HoldRecord, now: string): ReceiptRecord {
  const costNano = hold.estimatedCostNano ?? 0;
  return {
    id: hold.id,
    requestId: hold.requestId,
    accountId: hold.accountId,
    keyId: hold.keyId,
    keyPrefix: hold.keyPrefix,
    createdAt: hold.createdAt,
    status: 'failed',
    endpoint: hold.endpoint,
    stream: hold.stream,
    requestedModel: hold.requestedModel,
    answeringModel: null,
    attempts: [],
    warnings: [],
    usage: null,
    usageEstimated: costNano > 0,
    prices: null,
    holdNano: hold.amountNano,
    costNano,
    latencyMs: Math.max(0, Date.parse(now) - Date.parse(hold.createdAt)),
    timeToFirstTokenMs: null,
    errorCode: 'internal_error',
  };
}

/**
 * The result stored on a fix run whose process died mid-run: failed, its hold released, charged
 * `costNano` (its receipt's: the first step's prompt, estimated on its hold, as a chat request's).
 */
export function recoveredFixRunResult(costNano = 0): Record<string, unknown> {
  return {
    error: {
      code: 'internal_error',
      message:
        costNano > 0
          ? "The gateway process running this fix stopped before it finished; its hold was released and the first step's prompt was charged."
          : 'The gateway process running this fix stopped before it finished; its hold was released and nothing was charged.',
    },
    cost_nano: costNano,
  };
}
