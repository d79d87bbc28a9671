import type { ModelConfig } from '../config/schema.ts';
import type { Usage } from '../protocol/canonical/chat-result.ts';
import type { Attempt, ApiKeyRecord, ReceiptRecord, ReceiptStatus } from '../storage/records.ts';
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
    private readonly onSettled: (request: MeteredRequest) => void = () => {},
  ) {}

  /** Reserve the worst case before any provider is called. The money issue places the hold here. */
  reserve(worstCaseNano: number): void {
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
    await this.store.recordReceipt(receipt);
    return receipt;
  }
}

export class RequestMeter {
  private readonly open = new Set<MeteredRequest>();
  private drained: (() => void) | null = null;

  constructor(private readonly store: Store) {}

  begin(start: MeterStart): MeteredRequest {
    const request = new MeteredRequest(this.store, start, (settled) => {
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
