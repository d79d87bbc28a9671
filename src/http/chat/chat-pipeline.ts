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
import type { ChatWire, ParsedChat } from '../../formats/chat-wire.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import type { Ending, RequestLifecycle } from '../request-lifecycle.ts';
import { jsonTextsOf } from '../body/parse-json-body.ts';
import { streamAnswer, type ChatTurn } from './chat-stream.ts';

/** The handler of a chat route in `wire`'s format: its request's lifecycle runs the pipeline. */
export function chatHandler<Parsed extends ParsedChat>(deps: GatewayDeps, wire: ChatWire<Parsed>) {
  return (request: FastifyRequest, reply: FastifyReply): Promise<void> =>
    request.lifecycle!.serve((lifecycle) => serveChat(deps, wire, lifecycle, request, reply));
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
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Ending> {
  const { meter: metered, signal } = lifecycle;
  const key = metered.start.key;
  requireScope(key, 'inference');
  const parsed = wire.parse(request.body, request.headers);
  metered.requestedModel = parsed.model;
  metered.start.stream = parsed.stream;
  requireRequestAllowed(deps.catalog, key, parsed.model);
  // Measured once: routing, the hold, the usage estimates and message_start all read it.
  const prompt = new PromptMeasure(parsed.request);
  const plan = await planRoute(deps.catalog, parsed.model, prompt, parsed.routing);
  metered.attempts.push(...plan.skipped);
  await reserveWorstCase(metered, prompt, plan.candidates);
  // Gone while its hold was placed: not worth a provider call; the receipt says cancelled, at no cost.
  if (signal.aborted) throw new GatewayError('request_cancelled', 'The client closed the connection.');

  let inFlight: ModelConfig | null = null;
  // The prompt count the answering candidate's stream gave before its content, if it gave one.
  const started: { usage?: Usage } = {};
  const jsonTexts = jsonTextsOf(request.body);
  const caller: CandidateCaller = {
    providerFor: (model) => deps.providers.forModel(model),
    callFor: (model) => {
      inFlight = model;
      started.usage = undefined;
      return {
        request: parsed.request,
        model,
        reasoningEffort: model.capabilities.reasoning ? plan.reasoningEffort : undefined,
        maxOutputTokens: outputCapFor(parsed.request, model),
        signal,
        warn: (message) => metered.warn(model.id, message),
        onInputUsage: (usage) => (started.usage = usage),
        jsonTexts,
        traceHeaders: lifecycle.trace?.attempt(model),
      };
    },
    attempts: metered.attempts,
    signal,
    health: deps.health,
  };

  try {
    const turn = { wire, parsed, prompt, candidates: plan.candidates, caller, metered, request, reply, started };
    return await (parsed.stream ? streamAnswer(turn) : answerOnce(turn));
  } catch (error) {
    // A cancelled call still made the provider read the prompt: never bill it as zero.
    if (signal.aborted && inFlight && !metered.hasAnswer) metered.answeredBy(inFlight, await estimateUsage(prompt, inFlight, ''), true);
    throw error;
  }
}

async function answerOnce<Parsed extends ParsedChat>(turn: ChatTurn<Parsed>): Promise<Ending> {
  const { wire, parsed, prompt, candidates, caller, metered, request, reply } = turn;
  const { model, result } = await generateWithFallback(candidates, caller);
  const usage = result.usage ?? (await estimateUsage(prompt, model, answerText(result)));
  metered.answeredBy(model, usage, !result.usage);
  metered.firstToken();
  const context = { id: wire.answerId(request.requestId), created: Math.floor(Date.now() / 1000), model: model.id };
  const body = wire.renderResult(context, result, usage, parsed);
  return { status: 'succeeded', error: null, deliver: () => void reply.header('x-svc-model', model.id).send(body) };
}

function answerText(result: ChatResult): string {
  return result.content + (result.reasoning ?? '') + result.toolCalls.map((call) => call.name + call.arguments).join('');
}
