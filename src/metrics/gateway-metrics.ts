import type { Registry } from 'prom-client';
import type { ModelHealth } from '../routing/model-health.ts';
import type { ReceiptRecord } from '../storage/records.ts';
import { LedgerReading, LEDGER_READ_MS } from './ledger-reading.ts';
import { SummedCounter, SummedHistogram, type PromClient } from './summed-series.ts';

/** The models and aliases labels may name: the catalog, as reloads and console rules leave it. */
export interface MetricsCatalog {
  readonly models: ReadonlyMap<string, { provider: string }>;
  readonly aliases: ReadonlyMap<string, { candidates: readonly { id: string; provider: string }[] }>;
  /** A model a wildcard entry resolves (bounded by the price catalog), for its provider label. */
  findModel(id: string): { provider: string } | undefined;
}

/** What the gauges read when scraped. */
export interface MetricsSources {
  catalog: () => MetricsCatalog;
  health: ModelHealth;
  /** Requests of this process holding money now. */
  holdsInFlight: () => number;
  /** Money held now by every process, nano-USD (read from the ledger when scraped). */
  heldNano: () => Promise<number>;
  /** The account's console alerts now (low balance, budget share), read when scraped. */
  alerts?: () => Promise<Array<{ kind: string }>>;
  /** A key_prefix label on tokens, cost and rate limits (config metrics.per_key). */
  perKey?: boolean;
  /** The held amount could not be read (the scrape still answers, with the last value). */
  onLedgerError?: (error: unknown) => void;
}

/** The endpoints of model requests (a receipt's endpoint): their series exist from the start. */
const CHAT_ENDPOINTS = ['chat.completions', 'responses', 'messages'] as const;
/** Outcomes of a provider call that was made. */
const CALL_OUTCOMES = ['succeeded', 'failed', 'cancelled'] as const;
const TOKEN_KINDS = ['input', 'cached_input', 'cache_write', 'output', 'reasoning'] as const;
/** The console alerts gateway_account_alert has a series for. */
const ALERTS = ['balance_low', 'budget_share'] as const;

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const OVERHEAD_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];

/** The help text of each summed series, by name. */
const HELP = {
  gateway_http_requests_total: 'HTTP responses by method, route pattern and status',
  gateway_requests_total:
    'Model requests (one per receipt) by endpoint, requested alias or model, answering model and its provider, receipt status and error code',
  gateway_request_duration_seconds: 'Model request duration, from authentication to the receipt',
  gateway_time_to_first_token_seconds: 'Time from the request to the first answer content, by answering model',
  gateway_provider_call_duration_seconds: 'Provider calls (every attempt but skipped ones) by model, provider and outcome',
  gateway_overhead_seconds: "The gateway's own time per model request: its duration minus the time spent in provider calls",
  gateway_tokens_total: 'Tokens charged, by answering model, provider and kind (input counts uncached input only)',
  gateway_cost_nano_usd_total: 'What receipts charged, in nano-USD, by answering model and provider',
  gateway_fallbacks_total: 'Answers that came from a later candidate after earlier ones failed or were skipped',
  gateway_rate_limited_total: "Requests refused by a key's rate limit",
} as const;

function counter(name: keyof typeof HELP, labelNames: readonly string[]): SummedCounter<string> {
  return new SummedCounter({ name, help: HELP[name], labelNames });
}

function histogram(name: keyof typeof HELP, labelNames: readonly string[], buckets = SECONDS): SummedHistogram<string> {
  return new SummedHistogram({ name, help: HELP[name], labelNames, buckets });
}

/** Label names with `key_prefix` added when per-key labels are on. */
const byKey = (perKey: boolean, names: string[]) => (perKey ? [...names, 'key_prefix'] : names);

/**
 * The gateway's Prometheus metrics. Model-request metrics are read off receipts as they are
 * written, so counts, tokens and costs agree with the receipts by construction. Every label
 * takes values from a bounded set: configured models (anything else is "other"), aliases (on
 * `requested_model` only), provider ids, endpoints, statuses, error codes from the catalog,
 * route patterns; key prefixes only with `perKey`. The series of configured models, aliases and
 * providers exist at zero from the start, so rates and alerts over them never see a gap.
 */
export class GatewayMetrics {
  /** prom-client and its registry, loaded at the first scrape: until then nothing runs but the sums. */
  private registry: Promise<Registry> | null = null;
  private readonly perKey: boolean;
  private readonly held: LedgerReading;
  /** The console alerts that hold, as bits of ALERTS: read off the store like the held amount, so a database that hangs never blanks a scrape. */
  private readonly alerts: LedgerReading;
  // Summed in maps, rendered when scraped (summed-series.ts): a request updates a dozen series.
  private readonly http = counter('gateway_http_requests_total', ['method', 'route', 'status']);
  private readonly requests = counter('gateway_requests_total', ['endpoint', 'requested_model', 'model', 'provider', 'status', 'code']);
  private readonly duration = histogram('gateway_request_duration_seconds', ['endpoint', 'stream']);
  private readonly firstToken = histogram('gateway_time_to_first_token_seconds', ['endpoint', 'model', 'provider']);
  private readonly providerCalls = histogram('gateway_provider_call_duration_seconds', ['model', 'provider', 'outcome']);
  private readonly overhead = histogram('gateway_overhead_seconds', ['endpoint', 'stream'], OVERHEAD_SECONDS);
  private readonly tokens: SummedCounter<string>;
  private readonly cost: SummedCounter<string>;
  private readonly fallbacks = counter('gateway_fallbacks_total', ['requested_model', 'model', 'provider']);
  private readonly rateLimitedRequests: SummedCounter<string>;

  constructor(private readonly sources: MetricsSources) {
    this.perKey = sources.perKey ?? false;
    this.tokens = counter('gateway_tokens_total', byKey(this.perKey, ['model', 'provider', 'kind']));
    this.cost = counter('gateway_cost_nano_usd_total', byKey(this.perKey, ['model', 'provider']));
    this.rateLimitedRequests = counter('gateway_rate_limited_total', byKey(this.perKey, []));
    this.held = new LedgerReading(sources.heldNano, sources.onLedgerError);
    const readAlerts = sources.alerts;
    this.alerts = new LedgerReading(
      async () =>
        readAlerts ? (await readAlerts()).reduce((bits, alert) => bits | (1 << ALERTS.indexOf(alert.kind as (typeof ALERTS)[number])), 0) : 0,
      sources.onLedgerError,
    );
    this.addKnownSeries();
  }

  /** The series of the configured models, aliases and outcomes, at zero. */
  private addKnownSeries(): void {
    const catalog = this.sources.catalog();
    const served: [requested: string, model: string, provider: string][] = [];
    for (const [id, model] of catalog.models) served.push([id, id, model.provider]);
    for (const [name, alias] of catalog.aliases) {
      for (const candidate of alias.candidates) if (catalog.models.has(candidate.id)) served.push([name, candidate.id, candidate.provider]);
    }
    for (const endpoint of CHAT_ENDPOINTS) {
      for (const stream of ['false', 'true']) {
        this.duration.touch(`${endpoint}\0${stream}`, () => ({ endpoint, stream }));
        this.overhead.touch(`${endpoint}\0${stream}`, () => ({ endpoint, stream }));
      }
      for (const [requested, model, provider] of served) {
        this.requests.add(`${endpoint}\0${requested}\0${model}\0${provider}\0succeeded\0`, 0, () => ({
          endpoint,
          requested_model: requested,
          model,
          provider,
          status: 'succeeded',
          code: '',
        }));
      }
      for (const [id, model] of catalog.models) {
        this.firstToken.touch(`${endpoint}\0${id}\0${model.provider}`, () => ({ endpoint, model: id, provider: model.provider }));
      }
    }
    for (const [id, { provider }] of catalog.models) {
      for (const outcome of CALL_OUTCOMES) this.providerCalls.touch(`${id}\0${provider}\0${outcome}`, () => ({ model: id, provider, outcome }));
      if (this.perKey) continue;
      for (const kind of TOKEN_KINDS) this.tokens.add(`${id}\0${provider}\0${kind}`, 0, () => ({ model: id, provider, kind }));
      this.cost.add(`${id}\0${provider}`, 0, () => ({ model: id, provider }));
    }
    for (const [name, alias] of catalog.aliases) {
      for (const candidate of alias.candidates.slice(1)) {
        if (!catalog.models.has(candidate.id)) continue;
        const { id, provider } = candidate;
        this.fallbacks.add(`${name}\0${id}\0${provider}`, 0, () => ({ requested_model: name, model: id, provider }));
      }
    }
    if (!this.perKey) this.rateLimitedRequests.add('', 0, () => ({}));
  }

  /** prom-client, its registry with the process's default metrics, the sums and the gauges. */
  private async load(): Promise<Registry> {
    const client: PromClient = (await import('prom-client')).default;
    const registry = new client.Registry();
    const registers = [registry];
    const sources = this.sources;
    const held = this.held;
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
    // Read by render() before the registry collects: the three ledger gauges render what it found.
    new client.Gauge({
      name: 'gateway_held_nano_usd',
      help: 'Money held now by the requests of every process, in nano-USD (the last value read when the ledger does not answer)',
      registers,
      collect() {
        this.set(held.current().value);
      },
    });
    new client.Gauge({
      name: 'gateway_ledger_up',
      help: `1 when this scrape read the ledger (the held amount) within ${LEDGER_READ_MS} ms, 0 when it failed or timed out`,
      registers,
      collect() {
        this.set(held.current().up ? 1 : 0);
      },
    });
    new client.Gauge({
      name: 'gateway_ledger_read_age_seconds',
      help: 'Seconds since the held amount was last read from the ledger (since the start when never)',
      registers,
      collect() {
        this.set(held.current().ageSeconds);
      },
    });
    const models = () => sources.catalog().models;
    new client.Gauge({
      name: 'gateway_model_state',
      help: 'Provider health of each configured model: 1 for its current state (up, cooling, probing), 0 otherwise',
      labelNames: ['model', 'provider', 'state'],
      registers,
      collect() {
        this.reset();
        const catalog = models();
        for (const state of sources.health.states(catalog.keys())) {
          const provider = catalog.get(state.model)?.provider ?? 'none';
          for (const name of ['up', 'cooling', 'probing']) this.set({ model: state.model, provider, state: name }, state.state === name ? 1 : 0);
        }
      },
    });
    new client.Gauge({
      name: 'gateway_model_consecutive_failures',
      help: 'Consecutive failures this process has seen of each configured model',
      labelNames: ['model', 'provider'],
      registers,
      collect() {
        this.reset();
        const catalog = models();
        for (const state of sources.health.states(catalog.keys())) {
          this.set({ model: state.model, provider: catalog.get(state.model)?.provider ?? 'none' }, state.consecutiveFailures);
        }
      },
    });
    new client.Gauge({
      name: 'gateway_alias_candidate',
      help: "Each alias's candidates as routing tries them now (config or console rules): 1 per candidate, position from 0",
      labelNames: ['alias', 'model', 'provider', 'position'],
      registers,
      collect() {
        this.reset();
        for (const [alias, entry] of sources.catalog().aliases) {
          entry.candidates.forEach((candidate, position) =>
            this.set({ alias, model: candidate.id, provider: candidate.provider, position: String(position) }, 1),
          );
        }
      },
    });
    const alertGauge = new client.Gauge({
      name: 'gateway_account_alert',
      help: 'Console alerts of the account: 1 while the alert holds (balance_low, budget_share), 0 otherwise',
      labelNames: ['alert'],
      registers,
      collect: async () => {
        await this.alerts.refresh();
        const bits = this.alerts.current().value;
        ALERTS.forEach((alert, index) => alertGauge.set({ alert }, (bits >> index) & 1));
      },
    });
    return registry;
  }

  /** A model label: a configured model, else "other" (wildcard models, names clients send), "none" for no model. */
  private model(id: string | null): string {
    if (id === null) return 'none';
    return this.sources.catalog().models.has(id) ? id : 'other';
  }

  /** A requested_model label: a configured model or alias, else "other". */
  private requested(id: string | null): string {
    if (id === null) return 'none';
    const catalog = this.sources.catalog();
    return catalog.models.has(id) || catalog.aliases.has(id) ? id : 'other';
  }

  /** The provider id serving model `id` (configured, or through a wildcard entry); "none" without one. */
  private provider(id: string | null): string {
    if (id === null) return 'none';
    const catalog = this.sources.catalog();
    const configured = catalog.models.get(id);
    if (configured) return configured.provider;
    try {
      return catalog.findModel(id)?.provider ?? 'none';
    } catch {
      return 'none';
    }
  }

  response(method: string, route: string | undefined, status: number): void {
    const routeLabel = route ?? 'unmatched';
    this.http.add(`${method}\0${routeLabel}\0${status}`, 1, () => ({ method, route: routeLabel, status: String(status) }));
  }

  rateLimited(keyPrefix: string): void {
    if (this.perKey) this.rateLimitedRequests.add(keyPrefix, 1, () => ({ key_prefix: keyPrefix }));
    else this.rateLimitedRequests.add('', 1, () => ({}));
  }

  /** Called with every receipt once it is written. */
  receipt(receipt: ReceiptRecord): void {
    const model = this.model(receipt.answeringModel);
    const provider = this.provider(receipt.answeringModel);
    const requested = this.requested(receipt.requestedModel);
    const { endpoint, status, keyPrefix } = receipt;
    const stream = String(receipt.stream);
    const code = receipt.errorCode ?? '';
    this.requests.add(`${endpoint}\0${requested}\0${model}\0${provider}\0${status}\0${code}`, 1, () => ({
      endpoint,
      requested_model: requested,
      model,
      provider,
      status,
      code,
    }));
    const byStream = `${endpoint}\0${stream}`;
    const streamLabels = () => ({ endpoint, stream });
    this.duration.observe(byStream, receipt.latencyMs / 1000, streamLabels);
    if (receipt.timeToFirstTokenMs !== null) {
      this.firstToken.observe(`${endpoint}\0${model}\0${provider}`, receipt.timeToFirstTokenMs / 1000, () => ({ endpoint, model, provider }));
    }
    let providerMs = 0;
    for (const attempt of receipt.attempts) {
      if (attempt.outcome === 'skipped') continue;
      providerMs += attempt.latencyMs;
      const attempted = this.model(attempt.model);
      const attemptedProvider = this.provider(attempt.model);
      const outcome = attempt.outcome;
      this.providerCalls.observe(`${attempted}\0${attemptedProvider}\0${outcome}`, attempt.latencyMs / 1000, () => ({
        model: attempted,
        provider: attemptedProvider,
        outcome,
      }));
    }
    this.overhead.observe(byStream, Math.max(0, receipt.latencyMs - providerMs) / 1000, streamLabels);
    const answered = receipt.attempts.findIndex((attempt) => attempt.outcome === 'succeeded');
    if (
      answered > 0 &&
      receipt.attempts.slice(0, answered).some((attempt) => attempt.outcome === 'failed' || attempt.errorCode === 'provider_unavailable')
    ) {
      this.fallbacks.add(`${requested}\0${model}\0${provider}`, 1, () => ({ requested_model: requested, model, provider }));
    }
    const series = this.perKey ? `${model}\0${provider}\0${keyPrefix}` : `${model}\0${provider}`;
    const labels = (): Record<string, string> => (this.perKey ? { model, provider, key_prefix: keyPrefix } : { model, provider });
    if (receipt.usage) {
      const { inputTokens, cachedInputTokens, cacheWriteTokens, outputTokens, reasoningTokens } = receipt.usage;
      const count = (kind: string, tokens: number) => this.tokens.add(`${series}\0${kind}`, tokens, () => ({ ...labels(), kind }));
      count('input', inputTokens - cachedInputTokens - cacheWriteTokens);
      count('cached_input', cachedInputTokens);
      count('cache_write', cacheWriteTokens);
      count('output', outputTokens);
      count('reasoning', reasoningTokens);
    }
    if (receipt.costNano > 0) this.cost.add(series, receipt.costNano, labels);
  }

  async render(): Promise<string> {
    this.registry ??= this.load();
    const [registry] = await Promise.all([this.registry, this.held.refresh()]);
    return registry.metrics();
  }

  /** prom-client's text format 0.0.4, the one `render` gives. */
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
}
