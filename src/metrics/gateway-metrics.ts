import client from 'prom-client';
import type { ModelHealth } from '../routing/model-health.ts';
import type { ReceiptRecord } from '../storage/records.ts';

/** What the gauges read when scraped. */
export interface MetricsSources {
  /** Model ids of the catalog, aliases included: the only values a model label takes. */
  models: () => Iterable<string>;
  health: ModelHealth;
  /** Requests of this process holding money now. */
  holdsInFlight: () => number;
  /** Money held now by every process, nano-USD (read from the ledger when scraped). */
  heldNano: () => Promise<number>;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const OVERHEAD_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];

/**
 * The gateway's Prometheus metrics. Model-request metrics are read off receipts as they are
 * written, so counts, tokens and costs agree with the receipts by construction. Every label
 * takes values from a bounded set: configured models and aliases (anything else is "other"),
 * key prefixes, endpoints, statuses, error codes from the catalog, route patterns.
 */
export class GatewayMetrics {
  readonly registry = new client.Registry();
  private readonly http: client.Counter<'method' | 'route' | 'status'>;
  private readonly requests: client.Counter<'endpoint' | 'requested_model' | 'model' | 'status' | 'code'>;
  private readonly duration: client.Histogram<'endpoint' | 'stream'>;
  private readonly firstToken: client.Histogram<'endpoint' | 'model'>;
  private readonly providerCalls: client.Histogram<'model' | 'outcome'>;
  private readonly overhead: client.Histogram<'endpoint' | 'stream'>;
  private readonly tokens: client.Counter<'model' | 'key_prefix' | 'kind'>;
  private readonly cost: client.Counter<'model' | 'key_prefix'>;
  private readonly fallbacks: client.Counter<'requested_model' | 'model'>;
  private readonly rateLimitedRequests: client.Counter<'key_prefix'>;

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    client.collectDefaultMetrics({ register: this.registry, prefix: 'gateway_' });
    this.http = new client.Counter({
      name: 'gateway_http_requests_total',
      help: 'HTTP responses by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.requests = new client.Counter({
      name: 'gateway_requests_total',
      help: 'Model requests (one per receipt) by endpoint, requested alias or model, answering model, receipt status and error code',
      labelNames: ['endpoint', 'requested_model', 'model', 'status', 'code'],
      registers,
    });
    this.duration = new client.Histogram({
      name: 'gateway_request_duration_seconds',
      help: 'Model request duration, from authentication to the receipt',
      labelNames: ['endpoint', 'stream'],
      buckets: SECONDS,
      registers,
    });
    this.firstToken = new client.Histogram({
      name: 'gateway_time_to_first_token_seconds',
      help: 'Time from the request to the first answer content, by answering model',
      labelNames: ['endpoint', 'model'],
      buckets: SECONDS,
      registers,
    });
    this.providerCalls = new client.Histogram({
      name: 'gateway_provider_call_duration_seconds',
      help: 'Provider calls (every attempt but skipped ones) by model and outcome',
      labelNames: ['model', 'outcome'],
      buckets: SECONDS,
      registers,
    });
    this.overhead = new client.Histogram({
      name: 'gateway_overhead_seconds',
      help: "The gateway's own time per model request: its duration minus the time spent in provider calls",
      labelNames: ['endpoint', 'stream'],
      buckets: OVERHEAD_SECONDS,
      registers,
    });
    this.tokens = new client.Counter({
      name: 'gateway_tokens_total',
      help: 'Tokens charged, by answering model, key prefix and kind (input counts uncached input only)',
      labelNames: ['model', 'key_prefix', 'kind'],
      registers,
    });
    this.cost = new client.Counter({
      name: 'gateway_cost_nano_usd_total',
      help: 'What receipts charged, in nano-USD, by answering model and key prefix',
      labelNames: ['model', 'key_prefix'],
      registers,
    });
    this.fallbacks = new client.Counter({
      name: 'gateway_fallbacks_total',
      help: 'Answers that came from a later candidate after earlier ones failed or were skipped',
      labelNames: ['requested_model', 'model'],
      registers,
    });
    this.rateLimitedRequests = new client.Counter({
      name: 'gateway_rate_limited_total',
      help: "Requests refused by a key's rate limit",
      labelNames: ['key_prefix'],
      registers,
    });
    new client.Gauge({
      name: 'gateway_holds_in_flight',
      help: 'Requests of this process in flight, each holding money until it settles',
      registers,
      collect() {
        this.set(sources.holdsInFlight());
      },
    });
    new client.Gauge({
      name: 'gateway_held_nano_usd',
      help: 'Money held now by the requests of every process, in nano-USD',
      registers,
      async collect() {
        this.set(await sources.heldNano());
      },
    });
    new client.Gauge({
      name: 'gateway_model_state',
      help: 'Provider health of each model: 1 for its current state (up, cooling, probing), 0 otherwise',
      labelNames: ['model', 'state'],
      registers,
      collect() {
        this.reset();
        for (const state of sources.health.states(sources.models())) {
          for (const name of ['up', 'cooling', 'probing']) this.set({ model: state.model, state: name }, state.state === name ? 1 : 0);
        }
      },
    });
    new client.Gauge({
      name: 'gateway_model_consecutive_failures',
      help: 'Consecutive failures this process has seen of each model',
      labelNames: ['model'],
      registers,
      collect() {
        this.reset();
        for (const state of sources.health.states(sources.models())) this.set({ model: state.model }, state.consecutiveFailures);
      },
    });
  }

  /** A model label: a configured model or alias, else "other" (clients may send anything). */
  private model(id: string | null): string {
    if (id === null) return 'none';
    this.known ??= new Set(this.sources.models());
    return this.known.has(id) ? id : 'other';
  }

  private known: Set<string> | null = null;

  response(method: string, route: string | undefined, status: number): void {
    this.http.inc({ method, route: route ?? 'unmatched', status: String(status) });
  }

  rateLimited(keyPrefix: string): void {
    this.rateLimitedRequests.inc({ key_prefix: keyPrefix });
  }

  /** Called with every receipt once it is written. */
  receipt(receipt: ReceiptRecord): void {
    const model = this.model(receipt.answeringModel);
    const requested = this.model(receipt.requestedModel);
    const stream = String(receipt.stream);
    this.requests.inc({ endpoint: receipt.endpoint, requested_model: requested, model, status: receipt.status, code: receipt.errorCode ?? '' });
    this.duration.observe({ endpoint: receipt.endpoint, stream }, receipt.latencyMs / 1000);
    if (receipt.timeToFirstTokenMs !== null) this.firstToken.observe({ endpoint: receipt.endpoint, model }, receipt.timeToFirstTokenMs / 1000);
    let providerMs = 0;
    for (const attempt of receipt.attempts) {
      if (attempt.outcome === 'skipped') continue;
      providerMs += attempt.latencyMs;
      this.providerCalls.observe({ model: this.model(attempt.model), outcome: attempt.outcome }, attempt.latencyMs / 1000);
    }
    this.overhead.observe({ endpoint: receipt.endpoint, stream }, Math.max(0, receipt.latencyMs - providerMs) / 1000);
    const answered = receipt.attempts.findIndex((attempt) => attempt.outcome === 'succeeded');
    if (
      answered > 0 &&
      receipt.attempts.slice(0, answered).some((attempt) => attempt.outcome === 'failed' || attempt.errorCode === 'provider_unavailable')
    ) {
      this.fallbacks.inc({ requested_model: requested, model });
    }
    if (receipt.usage) {
      const key = { model, key_prefix: receipt.keyPrefix };
      const { inputTokens, cachedInputTokens, cacheWriteTokens, outputTokens, reasoningTokens } = receipt.usage;
      this.tokens.inc({ ...key, kind: 'input' }, inputTokens - cachedInputTokens - cacheWriteTokens);
      this.tokens.inc({ ...key, kind: 'cached_input' }, cachedInputTokens);
      this.tokens.inc({ ...key, kind: 'cache_write' }, cacheWriteTokens);
      this.tokens.inc({ ...key, kind: 'output' }, outputTokens);
      this.tokens.inc({ ...key, kind: 'reasoning' }, reasoningTokens);
    }
    if (receipt.costNano > 0) this.cost.inc({ model, key_prefix: receipt.keyPrefix }, receipt.costNano);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
