import type { Registry } from 'prom-client';
import type { ModelHealth } from '../routing/model-health.ts';
import type { ReceiptRecord } from '../storage/records.ts';
import { SummedCounter, SummedHistogram, type PromClient } from './summed-series.ts';

/** What the gauges read when scraped. */
export interface MetricsSources {
  /** Model ids of the catalog, aliases included: the only values a model label takes. */
  models: () => Iterable<string>;
  health: ModelHealth;
  /** Requests of this process holding money now. */
  holdsInFlight: () => number;
  /** Money held now by every process, nano-USD (read from the ledger when scraped). */
  heldNano: () => Promise<number>;
  /** The account's console alerts now (low balance, budget share), read when scraped. */
  alerts?: () => Promise<Array<{ kind: string }>>;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const OVERHEAD_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];

/** The help text of each summed series, by name. */
const HELP = {
  gateway_http_requests_total: 'HTTP responses by method, route pattern and status',
  gateway_requests_total: 'Model requests (one per receipt) by endpoint, requested alias or model, answering model, receipt status and error code',
  gateway_request_duration_seconds: 'Model request duration, from authentication to the receipt',
  gateway_time_to_first_token_seconds: 'Time from the request to the first answer content, by answering model',
  gateway_provider_call_duration_seconds: 'Provider calls (every attempt but skipped ones) by model and outcome',
  gateway_overhead_seconds: "The gateway's own time per model request: its duration minus the time spent in provider calls",
  gateway_tokens_total: 'Tokens charged, by answering model, key prefix and kind (input counts uncached input only)',
  gateway_cost_nano_usd_total: 'What receipts charged, in nano-USD, by answering model and key prefix',
  gateway_fallbacks_total: 'Answers that came from a later candidate after earlier ones failed or were skipped',
  gateway_rate_limited_total: "Requests refused by a key's rate limit",
} as const;

function counter<Label extends string>(name: keyof typeof HELP, labelNames: readonly Label[]): SummedCounter<Label> {
  return new SummedCounter({ name, help: HELP[name], labelNames });
}

function histogram<Label extends string>(name: keyof typeof HELP, labelNames: readonly Label[], buckets = SECONDS): SummedHistogram<Label> {
  return new SummedHistogram({ name, help: HELP[name], labelNames, buckets });
}

/**
 * The gateway's Prometheus metrics. Model-request metrics are read off receipts as they are
 * written, so counts, tokens and costs agree with the receipts by construction. Every label
 * takes values from a bounded set: configured models and aliases (anything else is "other"),
 * key prefixes, endpoints, statuses, error codes from the catalog, route patterns.
 */
export class GatewayMetrics {
  /** prom-client and its registry, loaded at the first scrape: until then nothing runs but the sums. */
  private registry: Promise<Registry> | null = null;
  // Summed in maps, rendered when scraped (summed-series.ts): a request updates a dozen series.
  private readonly http = counter('gateway_http_requests_total', ['method', 'route', 'status']);
  private readonly requests = counter('gateway_requests_total', ['endpoint', 'requested_model', 'model', 'status', 'code']);
  private readonly duration = histogram('gateway_request_duration_seconds', ['endpoint', 'stream']);
  private readonly firstToken = histogram('gateway_time_to_first_token_seconds', ['endpoint', 'model']);
  private readonly providerCalls = histogram('gateway_provider_call_duration_seconds', ['model', 'outcome']);
  private readonly overhead = histogram('gateway_overhead_seconds', ['endpoint', 'stream'], OVERHEAD_SECONDS);
  private readonly tokens = counter('gateway_tokens_total', ['model', 'key_prefix', 'kind']);
  private readonly cost = counter('gateway_cost_nano_usd_total', ['model', 'key_prefix']);
  private readonly fallbacks = counter('gateway_fallbacks_total', ['requested_model', 'model']);
  private readonly rateLimitedRequests = counter('gateway_rate_limited_total', ['key_prefix']);

  constructor(private readonly sources: MetricsSources) {}

  /** prom-client, its registry with the process's default metrics, the sums and the gauges. */
  private async load(): Promise<Registry> {
    const client: PromClient = (await import('prom-client')).default;
    const registry = new client.Registry();
    const registers = [registry];
    const sources = this.sources;
    client.collectDefaultMetrics({ register: registry, prefix: 'gateway_' });
    for (const counter of [this.http, this.requests, this.tokens, this.cost, this.fallbacks, this.rateLimitedRequests])
      counter.registerIn(client, registry);
    for (const histogram of [this.duration, this.firstToken, this.providerCalls, this.overhead]) histogram.registerIn(registry);
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
    new client.Gauge({
      name: 'gateway_account_alert',
      help: 'Console alerts of the account: 1 while the alert holds (balance_low, budget_share), 0 otherwise',
      labelNames: ['alert'],
      registers,
      async collect() {
        const active = new Set((sources.alerts ? await sources.alerts() : []).map((alert) => alert.kind));
        for (const alert of ['balance_low', 'budget_share']) this.set({ alert }, active.has(alert) ? 1 : 0);
      },
    });
    return registry;
  }

  /** A model label: a configured model or alias, else "other" (clients may send anything). */
  private model(id: string | null): string {
    if (id === null) return 'none';
    this.known ??= new Set(this.sources.models());
    return this.known.has(id) ? id : 'other';
  }

  private known: Set<string> | null = null;

  response(method: string, route: string | undefined, status: number): void {
    const routeLabel = route ?? 'unmatched';
    this.http.add(`${method}\0${routeLabel}\0${status}`, 1, () => ({ method, route: routeLabel, status: String(status) }));
  }

  rateLimited(keyPrefix: string): void {
    this.rateLimitedRequests.add(keyPrefix, 1, () => ({ key_prefix: keyPrefix }));
  }

  /** Called with every receipt once it is written. */
  receipt(receipt: ReceiptRecord): void {
    const model = this.model(receipt.answeringModel);
    const requested = this.model(receipt.requestedModel);
    const { endpoint, status, keyPrefix } = receipt;
    const stream = String(receipt.stream);
    const code = receipt.errorCode ?? '';
    this.requests.add(`${endpoint}\0${requested}\0${model}\0${status}\0${code}`, 1, () => ({
      endpoint,
      requested_model: requested,
      model,
      status,
      code,
    }));
    const byStream = `${endpoint}\0${stream}`;
    const streamLabels = () => ({ endpoint, stream });
    this.duration.observe(byStream, receipt.latencyMs / 1000, streamLabels);
    if (receipt.timeToFirstTokenMs !== null) {
      this.firstToken.observe(`${endpoint}\0${model}`, receipt.timeToFirstTokenMs / 1000, () => ({ endpoint, model }));
    }
    let providerMs = 0;
    for (const attempt of receipt.attempts) {
      if (attempt.outcome === 'skipped') continue;
      providerMs += attempt.latencyMs;
      const attempted = this.model(attempt.model);
      const outcome = attempt.outcome;
      this.providerCalls.observe(`${attempted}\0${outcome}`, attempt.latencyMs / 1000, () => ({ model: attempted, outcome }));
    }
    this.overhead.observe(byStream, Math.max(0, receipt.latencyMs - providerMs) / 1000, streamLabels);
    const answered = receipt.attempts.findIndex((attempt) => attempt.outcome === 'succeeded');
    if (
      answered > 0 &&
      receipt.attempts.slice(0, answered).some((attempt) => attempt.outcome === 'failed' || attempt.errorCode === 'provider_unavailable')
    ) {
      this.fallbacks.add(`${requested}\0${model}`, 1, () => ({ requested_model: requested, model }));
    }
    const byKey = `${model}\0${keyPrefix}`;
    if (receipt.usage) {
      const { inputTokens, cachedInputTokens, cacheWriteTokens, outputTokens, reasoningTokens } = receipt.usage;
      const count = (kind: string, tokens: number) => this.tokens.add(`${byKey}\0${kind}`, tokens, () => ({ model, key_prefix: keyPrefix, kind }));
      count('input', inputTokens - cachedInputTokens - cacheWriteTokens);
      count('cached_input', cachedInputTokens);
      count('cache_write', cacheWriteTokens);
      count('output', outputTokens);
      count('reasoning', reasoningTokens);
    }
    if (receipt.costNano > 0) this.cost.add(byKey, receipt.costNano, () => ({ model, key_prefix: keyPrefix }));
  }

  async render(): Promise<string> {
    this.registry ??= this.load();
    return (await this.registry).metrics();
  }

  /** prom-client's text format 0.0.4, the one `render` gives. */
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
}
