import type { ModelConfig } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { formatUsd } from '../lib/money.ts';
import type { Usage } from '../protocol/canonical/chat-result.ts';
import type { Attempt, ApiKeyRecord, HoldDecision, ReceiptRecord, ReceiptStatus } from '../storage/records.ts';
import type { Store } from '../storage/store.ts';
import { costOfUsage, pricesOf } from './price-usage.ts';

export interface MeterStart {
  requestId: string;
  receiptId: string;
  key: ApiKeyRecord;
  endpoint: string;
  /** Known once the body is parsed. */
  stream: boolean;
  startedAt: number;
}

/**
 * The life of one billable request: opened once authenticated, a hold reserved before the
 * first provider call, settled exactly once at the end (success, failure or cancellation)
 * with the actual cost and the receipt in one store transaction.
 */
export class MeteredRequest {
  requestedModel: string | null = null;
  readonly attempts: Attempt[] = [];
  holdNano = 0;
  private answeringModel: ModelConfig | null = null;
  private usage: Usage | null = null;
  private usageEstimated = false;
  private firstTokenAt: number | null = null;
  private settled: Promise<ReceiptRecord> | null = null;

  constructor(
    private readonly store: Store,
    readonly start: MeterStart,
    private readonly holds: { owner: string; expiryFrom(now: number): string },
    private readonly onSettled: (request: MeteredRequest) => void = () => {},
  ) {}

  /**
   * Hold the worst case before any provider is called: atomically, against the available
   * balance, the key's daily limit and the monthly budget. Refused: nothing is held, and the
   * request fails with insufficient_balance or budget_exceeded at cost 0.
   */
  async reserve(worstCaseNano: number): Promise<void> {
    const { start } = this;
    const createdAt = new Date(start.startedAt).toISOString();
    const decision = await this.store.placeHold(
      {
        id: start.receiptId,
        requestId: start.requestId,
        accountId: start.key.accountId,
        keyId: start.key.id,
        keyPrefix: start.key.prefix,
        endpoint: start.endpoint,
        stream: start.stream,
        requestedModel: this.requestedModel,
        amountNano: worstCaseNano,
        day: createdAt.slice(0, 10),
        month: createdAt.slice(0, 7),
        createdAt,
        owner: this.holds.owner,
        expiresAt: this.holds.expiryFrom(Date.now()),
      },
      start.key.dailyLimitNano,
    );
    if (!decision.placed) throw refusal(decision, worstCaseNano);
    this.holdNano = worstCaseNano;
  }

  get hasAnswer(): boolean {
    return this.answeringModel !== null;
  }

  firstToken(): void {
    this.firstTokenAt ??= Date.now();
  }

  /** The model that answered (or began to) and its usage, reported or estimated. */
  answeredBy(model: ModelConfig, usage: Usage | null, estimated: boolean): void {
    this.answeringModel = model;
    this.usage = usage;
    this.usageEstimated = estimated;
  }

  /** Write the receipt once; later calls return the same receipt. */
  settle(status: ReceiptStatus, errorCode: string | null): Promise<ReceiptRecord> {
    this.settled ??= this.write(status, errorCode).finally(() => this.onSettled(this));
    return this.settled;
  }

  private async write(status: ReceiptStatus, errorCode: string | null): Promise<ReceiptRecord> {
    const { start } = this;
    const prices = this.answeringModel ? pricesOf(this.answeringModel) : null;
    const receipt: ReceiptRecord = {
      id: start.receiptId,
      requestId: start.requestId,
      accountId: start.key.accountId,
      keyId: start.key.id,
      keyPrefix: start.key.prefix,
      createdAt: new Date(start.startedAt).toISOString(),
      status,
      endpoint: start.endpoint,
      stream: start.stream,
      requestedModel: this.requestedModel,
      answeringModel: this.answeringModel?.id ?? null,
      attempts: this.attempts,
      usage: this.usage,
      usageEstimated: this.usageEstimated,
      prices,
      holdNano: this.holdNano,
      costNano: this.usage && prices ? costOfUsage(this.usage, prices) : 0,
      latencyMs: Date.now() - start.startedAt,
      timeToFirstTokenMs: this.firstTokenAt === null ? null : this.firstTokenAt - start.startedAt,
      errorCode,
    };
    await recordWithRetry(this.store, receipt);
    return receipt;
  }
}

/** Waits between tries to record a settlement: a database that blinked must not cost a charge or strand a hold. */
const SETTLE_RETRY_DELAYS_MS = [50, 250, 1_000];

async function recordWithRetry(store: Store, receipt: ReceiptRecord): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await store.recordReceipt(receipt);
    } catch (error) {
      const delay = SETTLE_RETRY_DELAYS_MS[attempt];
      if (delay === undefined) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

function refusal(decision: Extract<HoldDecision, { placed: false }>, worstCaseNano: number): GatewayError {
  const worst = `$${formatUsd(worstCaseNano)}`;
  const left = `$${formatUsd(Math.max(0, decision.remainingNano))}`;
  switch (decision.reason) {
    case 'insufficient_balance':
      return new GatewayError('insufficient_balance', `This request may cost up to ${worst} but the available balance is ${left}. Add funds, or lower max_tokens.`);
    case 'daily_limit':
      return new GatewayError('budget_exceeded', `This key's daily limit leaves ${left} today (UTC) and this request may cost up to ${worst}. It resets at midnight UTC.`);
    case 'monthly_budget':
      return new GatewayError('budget_exceeded', `The account's monthly budget leaves ${left} this month (UTC) and this request may cost up to ${worst}.`);
  }
}

export class RequestMeter {
  private readonly open = new Set<MeteredRequest>();
  private drained: (() => void) | null = null;

  constructor(
    private readonly store: Store,
    private readonly holds: { owner: string; expiryFrom(now: number): string },
  ) {}

  begin(start: MeterStart): MeteredRequest {
    const request = new MeteredRequest(this.store, start, this.holds, (settled) => {
      this.open.delete(settled);
      if (this.open.size === 0) this.drained?.();
    });
    this.open.add(request);
    return request;
  }

  /** Requests opened and not yet settled. */
  get inFlight(): number {
    return this.open.size;
  }

  /** Resolves once every open request has settled (shutdown waits for this before closing storage). */
  drain(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drained = resolve;
    });
  }
}
