import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireScope } from '../../auth/key-authenticator.ts';
import { estimateUsage } from '../../billing/usage-estimate.ts';
import { PromptMeasure } from '../../tokens/token-estimate.ts';
import { outputCapFor, reserveWorstCase } from '../../billing/worst-case.ts';
import type { ModelConfig } from '../../config/schema.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { ChatResult, Usage } from '../../canonical/chat-result.ts';
import { generateWithFallback, type CandidateCaller } from '../../routing/call-with-fallback.ts';
import { planRoute } from '../../routing/plan-route.ts';
import { requireRequestAllowed } from '../../routing/requested-model.ts';
import { automaticCachingFor, promptCacheKeyFor } from '../../routing/prompt-caching.ts';
import type { ChatWire, ParsedChat } from '../../formats/chat-wire.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { ProviderRegistry } from '../../providers/provider-registry.ts';
import type { Ending, RequestLifecycle } from '../request-lifecycle.ts';
import { jsonTextsOf } from '../body/parse-json-body.ts';
import { httpExchange, type ChatExchange } from './chat-exchange.ts';
import { streamAnswer, type ChatTurn } from './chat-stream.ts';

/** The handler of a chat route in `wire`'s format: its request's lifecycle runs the pipeline. */
export function chatHandler<Parsed extends ParsedChat>(deps: GatewayDeps, wire: ChatWire<Parsed>) {
  return (request: FastifyRequest, reply: FastifyReply): Promise<void> =>
    request.lifecycle!.serve((lifecycle) => serveChat(deps, wire, lifecycle, httpExchange(request, reply)));
}

/**
 * The one path every chat request takes, whatever its wire format: scope, parse, allow-list,
 * route, reserve the worst case, call with fallback. It returns how the request ended; its
 * lifecycle settles it and then sends what is left of the answer.
 */
export async function serveChat<Parsed extends ParsedChat>(
  deps: GatewayDeps,
  wire: ChatWire<Parsed>,
  lifecycle: RequestLifecycle,
  exchange: ChatExchange,
): Promise<Ending> {
  // The config of the moment the request began: a reload meanwhile never changes its route or providers.
  const { catalog, providers } = deps;
  const release = providers.use();
  try {
    return await serveChatWith(deps, catalog, providers, wire, lifecycle, exchange);
  } finally {
    release();
  }
}

async function serveChatWith<Parsed extends ParsedChat>(
  deps: GatewayDeps,
  catalog: ModelCatalog,
  providers: ProviderRegistry,
  wire: ChatWire<Parsed>,
  lifecycle: RequestLifecycle,
  exchange: ChatExchange,
): Promise<Ending> {
  const { meter: metered, signal } = lifecycle;
  const key = metered.start.key;
  requireScope(key, 'inference');
  const parsed = wire.parse(exchange.body, exchange.headers);
  metered.requestedModel = parsed.model;
  metered.start.stream = parsed.stream;
  requireRequestAllowed(catalog, key, parsed.model);
  // Measured once: routing, the hold, the usage estimates and message_start all read it.
  const prompt = new PromptMeasure(parsed.request);
  const plan = await planRoute(catalog, parsed.model, prompt, parsed.routing);
  metered.attempts.push(...plan.skipped);
  await reserveWorstCase(metered, prompt, plan.candidates);
  // Gone while its hold was placed: not worth a provider call; the receipt says cancelled, at no cost.
  if (signal.aborted) throw new GatewayError('request_cancelled', 'The client closed the connection.');

  let inFlight: ModelConfig | null = null;
  // The prompt count the answering candidate's stream gave before its content, if it gave one.
  const started: { usage?: Usage } = {};
  const jsonTexts = jsonTextsOf(exchange.body);
  const automaticCaching = automaticCachingFor(deps.config, key, plan.alias);
  let cacheKey: string | undefined;
  const promptCacheKey = automaticCaching ? () => (cacheKey ??= promptCacheKeyFor(key.id, parsed.request)) : undefined;
  // One id and time for the answer, whichever candidate gives it: a relaying provider writes them into its events.
  const answer = { id: wire.answerId(exchange.requestId), created: Math.floor(Date.now() / 1000) };
  const caller: CandidateCaller = {
    providerFor: (model) => providers.forModel(model),
    callFor: (model) => {
      inFlight = model;
      started.usage = undefined;
      return {
        request: parsed.request,
        model,
        reasoningEffort: model.capabilities.reasoning ? plan.reasoningEffort : undefined,
        maxOutputTokens: outputCapFor(parsed.request, model),
        signal,
        automaticCaching,
        promptCacheKey,
        warn: (message) => metered.warn(model.id, message),
        onInputUsage: (usage) => (started.usage = usage),
        jsonTexts,
        relay: parsed.stream ? wire.relayFor?.({ ...answer, model: model.id }, parsed) : undefined,
        traceHeaders: lifecycle.trace?.attempt(model),
      };
    },
    attempts: metered.attempts,
    signal,
    health: deps.health,
  };

  try {
    const turn = { wire, parsed, prompt, candidates: plan.candidates, caller, metered, exchange, started, answer };
    return await (parsed.stream ? streamAnswer(turn) : answerOnce(turn));
  } catch (error) {
    // A cancelled call still made the provider read the prompt: never bill it as zero.
    if (signal.aborted && inFlight && !metered.hasAnswer) metered.answeredBy(inFlight, await estimateUsage(prompt, inFlight, ''), true);
    throw error;
  }
}

async function answerOnce<Parsed extends ParsedChat>(turn: ChatTurn<Parsed>): Promise<Ending> {
  const { wire, parsed, prompt, candidates, caller, metered, exchange, answer } = turn;
  const { model, result } = await generateWithFallback(candidates, caller);
  const usage = result.usage ?? (await estimateUsage(prompt, model, answerText(result)));
  metered.answeredBy(model, usage, !result.usage);
  metered.firstToken();
  const context = { ...answer, model: model.id };
  const body = wire.renderResult(context, result, usage, parsed);
  return { status: 'succeeded', error: null, deliver: () => exchange.sendBody(body, { 'x-svc-model': model.id }) };
}

function answerText(result: ChatResult): string {
  return result.content + (result.reasoning ?? '') + result.toolCalls.map((call) => call.name + call.arguments).join('');
}
