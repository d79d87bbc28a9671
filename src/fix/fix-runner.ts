import type { FastifyBaseLogger } from 'fastify';
import type { MeteredRequest, RequestMeter } from '../billing/request-meter.ts';
import { holdRefusal } from '../billing/request-meter.ts';
import { estimateUsage } from '../billing/usage-estimate.ts';
import { estimatedFixCallCost, outputCapFor, worstCaseCost } from '../billing/worst-case.ts';
import type { PromptMeasure } from '../tokens/token-estimate.ts';
import type { GatewayConfig, ModelConfig } from '../config/schema.ts';
import { GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import { generateWithFallback } from '../routing/call-with-fallback.ts';
import type { RequestTrace } from '../telemetry/tracing.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import type { ModelHealth } from '../routing/model-health.ts';
import type { Attempt } from '../routing/attempt.ts';
import { planRoute } from '../routing/plan-route.ts';
import type { ApiKeyRecord, FixQuoteRecord, FixRunEvent, FixRunRecord, FixRunStart, ReceiptStatus } from '../storage/records.ts';
import type { FixRunStore } from '../storage/fix-run-store.ts';
import { aliasOfTier } from './fix-agents.ts';
import type { FixInput } from './fix-input.ts';
import { findAgent } from './fix-agents.ts';
import { runFixLoop, type FixOutcome } from './fix-loop.ts';

export interface FixRunnerDeps {
  config: GatewayConfig;
  catalog: ModelCatalog;
  store: FixRunStore;
  meter: RequestMeter;
  providers: ProviderRegistry;
  health: ModelHealth;
  logger: FastifyBaseLogger;
  now: () => number;
}

/** How often a follower on another process looks for new events, and a running run for a cancel request. */
const POLL_MS = 250;
const CANCEL_POLL_MS = 1_000;

/** A run executing in this process. */
interface LocalRun {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Runs approved quotes as the server's own jobs: a run goes on when its client leaves, writes
 * every step as an event any process can replay, and settles exactly once, its receipt and its
 * final state in one transaction.
 */
export class FixRunner {
  private readonly local = new Map<string, LocalRun>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private closing = false;

  constructor(private readonly deps: FixRunnerDeps) {}

  /**
   * Start the quote's run (at most once: a quote that already ran returns its run), holding its
   * maximum like a chat hold. `metered` is the request's meter; it is settled by the run.
   */
  async start(
    quote: FixQuoteRecord,
    key: ApiKeyRecord,
    metered: MeteredRequest,
    runId: string,
    trace: RequestTrace | null = null,
  ): Promise<FixRunRecord> {
    if (this.closing) {
      const refusal = new GatewayError('provider_unavailable', 'The gateway is shutting down; run the quote again on another process.');
      const receipt = await metered.settle('failed', refusal.code);
      trace?.end(receipt);
      throw refusal;
    }
    const run: FixRunRecord = {
      id: runId,
      quoteId: quote.id,
      accountId: key.accountId,
      keyId: key.id,
      receiptId: metered.start.receiptId,
      agent: quote.agent,
      tier: quote.tier,
      maxCostNano: quote.maxCostNano,
      status: 'running',
      createdAt: new Date(metered.start.startedAt).toISOString(),
      finishedAt: null,
      result: null,
      cancelRequested: false,
    };
    metered.requestedModel = aliasOfTier(quote.tier);
    // Charged on recovery if this process dies mid-run (orphan-receipt.ts), as a chat request.
    metered.estimatedCostNano = estimatedFixCallCost(quote.inputTokens, this.deps.catalog.aliases.get(metered.requestedModel)?.candidates ?? []);
    let started: FixRunStart;
    try {
      started = await this.deps.store.startFixRun(run, metered.holdFor(quote.maxCostNano), key.dailyLimitNano);
    } catch (error) {
      metered.abandon();
      trace?.end(null);
      throw error;
    }
    if (!started.started && 'existing' in started) {
      // Posted again at the same moment: this request returns the run, with a receipt of its own at no cost.
      const receipt = await metered.settle('succeeded', null);
      trace?.end(receipt);
      return started.existing;
    }
    if (!started.started) {
      // Refused before any call: a receipt at cost 0, as for a chat request.
      const refusal = holdRefusal(started.refused, quote.maxCostNano);
      const receipt = await metered.settle('failed', refusal.code);
      trace?.end(receipt);
      throw refusal;
    }
    metered.holdNano = quote.maxCostNano;
    metered.costCapNano = quote.maxCostNano;
    const controller = new AbortController();
    const local: LocalRun = { controller, done: Promise.resolve() };
    this.local.set(run.id, local);
    local.done = this.execute(run, quote, metered, controller, trace).finally(() => {
      this.local.delete(run.id);
      this.wake(run.id);
    });
    return run;
  }

  /** Ask a run to stop; the process running it stops before its next step or call. */
  async cancel(accountId: string, runId: string): Promise<FixRunRecord | null> {
    const run = await this.deps.store.requestFixRunCancel(accountId, runId);
    if (run?.status === 'running') this.local.get(runId)?.controller.abort('cancelled');
    return run;
  }

  /**
   * The run's events after `after`, as they happen, until the run ends; from this process's own
   * runs at once, from other processes' runs by polling. A run whose process died ends with the
   * state recovery gave it.
   */
  async *follow(run: FixRunRecord, after: number, signal?: AbortSignal): AsyncGenerator<FixRunEvent> {
    let last = after;
    for (let round = 0; ; round++) {
      for (const event of await this.deps.store.listFixRunEvents(run.id, last)) {
        yield event;
        last = event.sequence;
        if (event.type === 'run.completed') return;
      }
      if (signal?.aborted) return;
      if (!this.local.has(run.id) && round % 4 === 0) {
        const now = await this.deps.store.getFixRun(run.accountId, run.id);
        if (now && now.status !== 'running') {
          yield* this.endOf(now, last);
          return;
        }
      }
      await this.waitForNews(run.id, this.local.has(run.id) ? CANCEL_POLL_MS : POLL_MS, signal);
    }
  }

  /**
   * The events after `after` of a run that ended: those it wrote, and, when its process died
   * before writing its last one, that event as the run record gives it (the next sequence).
   * Nothing past the last event: a client resuming from beyond the end gets no event.
   */
  private async *endOf(run: FixRunRecord, after: number): AsyncGenerator<FixRunEvent> {
    const events = await this.deps.store.listFixRunEvents(run.id, 0);
    for (const event of events) if (event.sequence > after) yield event;
    const final = events.at(-1);
    if (final?.type === 'run.completed') return;
    const sequence = (final?.sequence ?? 0) + 1;
    if (sequence <= after) return;
    yield { runId: run.id, sequence, at: run.finishedAt ?? new Date().toISOString(), type: 'run.completed', data: { status: run.status } };
  }

  /** Runs in this process. */
  get inFlight(): number {
    return this.local.size;
  }

  /** Stop taking runs; those in flight end failed (charged for the calls they made) once `abort` is called. */
  async close(abort: Promise<void>): Promise<void> {
    this.closing = true;
    const running = Promise.all([...this.local.values()].map((run) => run.done));
    await Promise.race([running, abort]);
    for (const run of this.local.values()) run.controller.abort('shutdown');
    await running;
  }

  private async execute(
    run: FixRunRecord,
    quote: FixQuoteRecord,
    metered: MeteredRequest,
    controller: AbortController,
    trace: RequestTrace | null,
  ): Promise<void> {
    const { store, logger } = this.deps;
    let sequence = 0;
    const emit = async (type: string, data: Record<string, unknown>) => {
      await store.appendFixRunEvent({ runId: run.id, sequence: ++sequence, at: new Date().toISOString(), type, data });
      this.wake(run.id);
    };
    const cancelWatch = setInterval(() => {
      store
        .getFixRun(run.accountId, run.id)
        .then((current) => current?.cancelRequested && controller.abort('cancelled'))
        .catch(() => {});
    }, CANCEL_POLL_MS);
    cancelWatch.unref();

    let outcome: FixOutcome;
    try {
      await emit('run.started', { status: 'running' });
      outcome = await runFixLoop({
        agent: findAgent(quote.agent)!,
        input: quote.input as unknown as FixInput,
        stepBudget: quote.stepBudget,
        maxCostNano: quote.maxCostNano,
        spentNano: () => metered.actualCostNano,
        worstCaseOf: async (prompt) => {
          // A run's cap is checked on the counted prompt, never on its byte bound.
          await prompt.count();
          return worstCaseCost(prompt, (await this.plan(quote, prompt, this.deps.catalog)).candidates);
        },
        // One config for the whole call, whatever a reload does meanwhile.
        callModel: (prompt, stepIndex) =>
          this.withConfig((catalog, providers) => this.callModel(catalog, providers, quote, prompt, stepIndex, metered, controller.signal, trace)),
        signal: controller.signal,
        stepStarted: (step) => emit('step.started', { step }),
        stepEnded: (step) => emit('step.completed', { step }),
      });
    } catch (error) {
      logger.error({ err: error, runId: run.id }, 'fix run failed');
      const failure = toGatewayError(error);
      outcome = { status: 'failed', patch: null, files: [], explanation: '', error: { code: failure.code, message: failure.message } };
    } finally {
      clearInterval(cancelWatch);
    }
    if (outcome.status === 'cancelled' && controller.signal.reason === 'shutdown') {
      outcome = {
        ...outcome,
        status: 'failed',
        error: { code: 'gateway_shutdown', message: 'The gateway shut down during the run; the calls it made are charged.' },
      };
    }
    await this.settle(run, outcome, metered, emit, trace);
  }

  private async settle(
    run: FixRunRecord,
    outcome: FixOutcome,
    metered: MeteredRequest,
    emit: (type: string, data: Record<string, unknown>) => Promise<void>,
    trace: RequestTrace | null,
  ): Promise<void> {
    const receiptStatus: ReceiptStatus = outcome.status === 'succeeded' ? 'succeeded' : outcome.status === 'cancelled' ? 'cancelled' : 'failed';
    const actual = metered.actualCostNano;
    const result = {
      patch: outcome.patch,
      files: outcome.files,
      explanation: outcome.explanation,
      error: outcome.error,
      cost_nano: Math.min(actual, run.maxCostNano),
      // The providers charged more than the approved maximum: the gateway bears the difference.
      capped_nano: Math.max(0, actual - run.maxCostNano),
    };
    let ended = false;
    try {
      const receipt = await metered.settle(receiptStatus, outcome.error?.code ?? null, async (receipt) => {
        ended = await this.deps.store.finishFixRun(run.id, outcome.status, result, new Date().toISOString(), receipt);
      });
      trace?.end(receipt);
      if (ended) await emit('run.completed', { status: outcome.status });
    } catch (error) {
      // The hold stays until recovery releases it and ends the run: nothing is lost.
      trace?.end(null);
      this.deps.logger.error({ err: error, runId: run.id }, 'could not record the end of a fix run');
    }
  }

  private plan(quote: FixQuoteRecord, prompt: PromptMeasure, catalog: ModelCatalog) {
    return planRoute(catalog, aliasOfTier(quote.tier), prompt, { fallback: true, clampMaxOutput: true });
  }

  /** `work` on the catalog and providers of this moment: a reload meanwhile changes neither, nor closes the providers. */
  private async withConfig<T>(work: (catalog: ModelCatalog, providers: ProviderRegistry) => Promise<T>): Promise<T> {
    const { catalog, providers } = this.deps;
    const release = providers.use();
    try {
      return await work(catalog, providers);
    } finally {
      release();
    }
  }

  /** One step's model call through the router, every attempt on the receipt with its step. */
  private async callModel(
    catalog: ModelCatalog,
    providers: ProviderRegistry,
    quote: FixQuoteRecord,
    prompt: PromptMeasure,
    step: number,
    metered: MeteredRequest,
    signal: AbortSignal,
    trace: RequestTrace | null,
  ) {
    const { request } = prompt;
    const plan = await this.plan(quote, prompt, catalog);
    const attempts: Attempt[] = [];
    let inFlight: ModelConfig | null = null;
    const record = () => metered.attempts.push(...[...plan.skipped, ...attempts].map((attempt) => ({ ...attempt, step })));
    try {
      const { model, result } = await generateWithFallback(plan.candidates, {
        providerFor: (candidate) => providers.forModel(candidate),
        callFor: (candidate) => {
          inFlight = candidate;
          return {
            request,
            model: candidate,
            reasoningEffort: candidate.capabilities.reasoning ? plan.reasoningEffort : undefined,
            maxOutputTokens: outputCapFor(request, candidate),
            signal,
            warn: (message) => metered.warn(candidate.id, message),
            traceHeaders: trace?.attempt(candidate),
          };
        },
        attempts,
        signal,
        health: this.deps.health,
      });
      const usage = result.usage ?? (await estimateUsage(prompt, model, result.content));
      const costNano = metered.addCall(model, usage, !result.usage);
      attempts.at(-1)!.costNano = costNano;
      record();
      metered.firstToken();
      return { model: model.id, text: result.content, usage, costNano };
    } catch (error) {
      // A cancelled call still made the provider read the prompt: never bill it as zero.
      if (signal.aborted && inFlight) {
        const costNano = metered.addCall(inFlight, await estimateUsage(prompt, inFlight, ''), true);
        const last = attempts.at(-1);
        if (last) last.costNano = costNano;
      }
      record();
      throw error;
    }
  }

  private wake(runId: string): void {
    const waiting = this.waiters.get(runId);
    if (!waiting) return;
    this.waiters.delete(runId);
    for (const resolve of waiting) resolve();
  }

  private waitForNews(runId: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.get(runId)?.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      let waiting = this.waiters.get(runId);
      if (!waiting) this.waiters.set(runId, (waiting = new Set()));
      waiting.add(done);
    });
  }
}
