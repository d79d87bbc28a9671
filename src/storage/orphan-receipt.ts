import type { HoldRecord, ReceiptRecord } from './records.ts';

/** The receipt written for a request whose process died before it settled: failed, cost 0. */
export function orphanReceipt(hold: HoldRecord, now: string): ReceiptRecord {
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
    usageEstimated: false,
    prices: null,
    holdNano: hold.amountNano,
    costNano: 0,
    latencyMs: Math.max(0, Date.parse(now) - Date.parse(hold.createdAt)),
    timeToFirstTokenMs: null,
    errorCode: 'internal_error',
  };
}

/** The result stored on a fix run whose process died mid-run: failed, its hold released, nothing charged. */
export function recoveredFixRunResult(): Record<string, unknown> {
  return {
    error: {
      code: 'internal_error',
      message: 'The gateway process running this fix stopped before it finished; its hold was released and nothing was charged.',
    },
    cost_nano: 0,
  };
}
