import type { ModelConfig } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { formatUsd } from '../lib/money.ts';
import type { Usage } from '../canonical/chat-result.ts';
import type { Attempt } from '../routing/attempt.ts';
import type { ApiKeyRecord, HoldDecision, HoldRecord, ReceiptRecord, ReceiptStatus } from '../storage/records.ts';
import type { LedgerStore } from '../storage/ledger-store.ts';
import { costOfCall, pricesOf } from './price-usage.ts';

/** Where holds get their owner and expiry; `live`, when given, is told which requests are in flight (hold-keeper.ts). */
export interface HoldSource {
  owner: string;
  expiryFrom(now: number): string;
  live?: Set<string>;
}

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
 * The money of one billable request: opened once authenticated, a hold reserved before the
 * first provider call, settled exactly once at the end (success, failure or cancellation)
 * with the actual cost and the receipt in one store transaction. A model request is settled by
 * its lifecycle (http/request-lifecycle.ts), a fix run by its runner (fix/fix-runner.ts).
 */
export class MeteredRequest {
  requestedModel: string | null = null;
  readonly attempts: Attempt[] = [];
  /** Client settings a provider could not honour (fields dropped in translation), for the receipt. */
  readonly warnings: string[] = [];
  holdNano = 0;
  /** Charged on recovery if this process dies after the provider was called (worst-case.ts estimatedCallCost); recorded on the hold. */
  estimatedCostNano = 0;
  /** Never charge more than this (a fix run's approved maximum); null: the actual cost in full. */
  costCapNano: number | null = null;
  private answeringModel: ModelConfig | null = null;
  /** Model calls to charge: one for a chat request, one per step for a fix run. */
  private calls: Array<{ model: ModelConfig; usage: Usage }> = [];
  private usageEstimated = false;
  private firstTokenAt: number | null = null;
  private settled: Promise<ReceiptRecord> | null = null;

  constructor(
    private readonly store: LedgerStore,
    readonly start: MeterStart,
    private readonly holds: HoldSource,
    private readonly onSettled: (request: MeteredRequest) => void = () => {},
  ) {}

  /**
   * Hold the worst case before any provider is called: atomically, against the available
   * balance, the key's daily limit and the monthly budget. Refused: nothing is held, and the
   * request fails with insufficient_balance or budget_exceeded at cost 0.
   *
   * `tighter` gives a lower worst case that costs work to find (counting the prompt): asked only
   * when the first one was refused, told what the refusal left, and tried only when it fits that.
   */
  async reserve(worstCaseNano: number, tighter?: (remainingNano: number) => Promise<number>): Promise<void> {
    let amount = worstCaseNano;
    let decision = await this.store.placeHold(this.holdFor(amount), this.start.key.dailyLimitNano);
    if (!decision.placed && tighter) {
      const lower = await tighter(decision.remainingNano);
      if (lower < amount && lower <= decision.remainingNano) {
        amount = lower;
        decision = await this.store.placeHold(this.holdFor(amount), this.start.key.dailyLimitNano);
      }
    }
    if (!decision.placed) throw holdRefusal(decision, amount);
    this.holdNano = amount;
  }

  /** The hold this request places for `amountNano`; sharing its id with the receipt. */
  holdFor(amountNano: number): HoldRecord {
    const { start } = this;
    const createdAt = new Date(start.startedAt).toISOString();
    return {
      id: start.receiptId,
      requestId: start.requestId,
      accountId: start.key.accountId,
      keyId: start.key.id,
      keyPrefix: start.key.prefix,
      endpoint: start.endpoint,
      stream: start.stream,
      requestedModel: this.requestedModel,
      amountNano,
      day: createdAt.slice(0, 10),
      month: createdAt.slice(0, 7),
      createdAt,
      owner: this.holds.owner,
      expiresAt: this.holds.expiryFrom(Date.now()),
      estimatedCostNano: Math.min(this.estimatedCostNano, amountNano),
    };
  }

  get hasAnswer(): boolean {
    return this.answeringModel !== null;
  }

  firstToken(): void {
    this.firstTokenAt ??= Date.now();
  }

  /** Note a setting of the client's that `modelId` could not honour (each once). */
  warn(modelId: string, message: string): void {
    const warning = `${modelId}: ${message}`;
    if (!this.warnings.includes(warning)) this.warnings.push(warning);
  }

  /** The model that answered (or began to) and its usage, reported or estimated. */
  answeredBy(model: ModelConfig, usage: Usage | null, estimated: boolean): void {
    this.answeringModel = model;
    this.calls = usage ? [{ model, usage }] : [];
    this.usageEstimated = estimated;
  }

  /** One more model call of a request that makes several (a fix run's steps); returns its cost. */
  addCall(model: ModelConfig, usage: Usage, estimated: boolean): number {
    this.answeringModel = model;
    this.calls.push({ model, usage });
    this.usageEstimated ||= estimated;
    return costOfCall(model, usage);
  }

  /** What the calls so far cost, before any cap. */
  get actualCostNano(): number {
    return this.calls.reduce((sum, call) => sum + costOfCall(call.model, call.usage), 0);
  }

  /**
   * Write the receipt once; later calls return the same receipt. `record` writes it (a fix run
   * ends its run in the same transaction); by default the store's recordReceipt.
   */
  settle(status: ReceiptStatus, errorCode: string | null, record?: (receipt: ReceiptRecord) => Promise<unknown>): Promise<ReceiptRecord> {
    this.settled ??= this.write(status, errorCode, record ?? ((receipt) => this.store.recordReceipt(receipt))).finally(() => this.onSettled(this));
    return this.settled;
  }

  /** Forget a request that turned out to need no receipt (a fix run posted again); nothing is written. */
  abandon(): void {
    if (this.settled) return;
    this.settled = Promise.reject(new Error('this request was abandoned; it has no receipt'));
    this.settled.catch(() => {});
    this.onSettled(this);
  }

  private async write(status: ReceiptStatus, errorCode: string | null, record: (receipt: ReceiptRecord) => Promise<unknown>): Promise<ReceiptRecord> {
    const { start } = this;
    // The tier the last call's prompt reached (a fix run's steps each pay their own).
    const prices = this.answeringModel ? pricesOf(this.answeringModel, this.calls.at(-1)?.usage) : null;
    const actual = this.actualCostNano;
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
      warnings: this.warnings,
      usage: this.calls.length ? sumUsage(this.calls.map((call) => call.usage)) : null,
      usageEstimated: this.usageEstimated,
      prices,
      holdNano: this.holdNano,
      costNano: this.costCapNano === null ? actual : Math.min(actual, this.costCapNano),
      latencyMs: Date.now() - start.startedAt,
      timeToFirstTokenMs: this.firstTokenAt === null ? null : this.firstTokenAt - start.startedAt,
      errorCode,
    };
    await recordWithRetry(() => record(receipt));
    return receipt;
  }
}

function sumUsage(usages: Usage[]): Usage {
  const total: Usage = { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  for (const usage of usages) {
    total.inputTokens += usage.inputTokens;
    total.cachedInputTokens += usage.cachedInputTokens;
    total.cacheWriteTokens += usage.cacheWriteTokens;
    total.outputTokens += usage.outputTokens;
    total.reasoningTokens += usage.reasoningTokens;
  }
  return total;
}

/** Waits between tries to record a settlement: a database that blinked must not cost a charge or strand a hold. */
const SETTLE_RETRY_DELAYS_MS = [50, 250, 1_000];

async function recordWithRetry(record: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await record();
      return;
    } catch (error) {
      const delay = SETTLE_RETRY_DELAYS_MS[attempt];
      if (delay === undefined) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** The error a refused hold answers with, in the words of the limit that refused it. */
export function holdRefusal(decision: Extract<HoldDecision, { placed: false }>, worstCaseNano: number): GatewayError {
  const worst = `$${formatUsd(worstCaseNano)}`;
  const left = `$${formatUsd(Math.max(0, decision.remainingNano))}`;
  switch (decision.reason) {
    case 'insufficient_balance':
      return new GatewayError(
        'insufficient_balance',
        `This request may cost up to ${worst} but the available balance is ${left}. Add funds, or lower max_tokens.`,
      );
    case 'daily_limit':
      return new GatewayError(
        'budget_exceeded',
        `This key's daily limit leaves ${left} today (UTC) and this request may cost up to ${worst}. It resets at midnight UTC.`,
      );
    case 'monthly_budget':
      return new GatewayError(
        'budget_exceeded',
        `The account's monthly budget leaves ${left} this month (UTC) and this request may cost up to ${worst}.`,
      );
  }
}

export class RequestMeter {
  private readonly open = new Set<MeteredRequest>();
  private drained: (() => void) | null = null;

  constructor(
    private readonly store: LedgerStore,
    private readonly holds: HoldSource,
  ) {}

  begin(start: MeterStart): MeteredRequest {
    this.holds.live?.add(start.receiptId);
    const request = new MeteredRequest(this.store, start, this.holds, (settled) => {
      this.holds.live?.delete(start.receiptId);
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
