import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireModelAllowed, requireScope } from '../../auth/key-authenticator.ts';
import { estimateUsage } from '../../billing/usage-estimate.ts';
import { PromptMeasure } from '../../tokens/token-estimate.ts';
import { outputCapFor, reserveWorstCase } from '../../billing/worst-case.ts';
import type { ModelConfig } from '../../config/schema.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { ChatResult, Usage } from '../../canonical/chat-result.ts';
import { ProviderError } from '../../providers/provider-error.ts';
import { generateWithFallback, openStreamWithFallback, type CandidateCaller } from '../../routing/call-with-fallback.ts';
import { planRoute } from '../../routing/plan-route.ts';
import type { MeteredRequest } from '../../billing/request-meter.ts';
import type { ChatWire, ParsedChat } from '../../formats/chat-wire.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { SseWriter } from './sse-writer.ts';
import { jsonTextsOf } from '../body/parse-json-body.ts';
import { StreamedAnswer } from '../../billing/streamed-answer.ts';
import { midStreamError } from '../../routing/mid-stream-error.ts';

/** Everything one answer needs, once the route is planned. */
interface ChatTurn<Parsed extends ParsedChat> {
  wire: ChatWire<Parsed>;
  parsed: Parsed;
  prompt: PromptMeasure;
  candidates: ModelConfig[];
  caller: CandidateCaller;
  metered: MeteredRequest;
  request: FastifyRequest;
  reply: FastifyReply;
  started: { usage?: Usage };
}

/** Stops the provider when the client goes away before the answer was written. */
function abortOnClientClose(reply: FastifyReply): AbortController {
  const controller = new AbortController();
  // Gone already (while its hold was placed): abort now, the close event is past.
  if (reply.raw.destroyed) controller.abort();
  else
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) controller.abort();
    });
  return controller;
}

/**
 * The one path every chat request takes, whatever its wire format: scope, parse, allow-list,
 * route, reserve the worst case, call with fallback, settle with the actual cost.
 */
export async function serveChat<Parsed extends ParsedChat>(
  deps: GatewayDeps,
  wire: ChatWire<Parsed>,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const metered = request.metered!;
  const key = metered.start.key;
  requireScope(key, 'inference');
  const parsed = wire.parse(request.body, request.headers);
  metered.requestedModel = parsed.model;
  metered.start.stream = parsed.stream;
  requireModelAllowed(key, parsed.model);
  // Measured once: routing, the hold, the usage estimates and message_start all read it.
  const prompt = new PromptMeasure(parsed.request);
  const plan = await planRoute(deps.catalog, parsed.model, prompt, parsed.routing);
  metered.attempts.push(...plan.skipped);
  await reserveWorstCase(metered, prompt, plan.candidates);

  const controller = abortOnClientClose(reply);
  // Not worth a provider call: the receipt says cancelled, at no cost.
  if (controller.signal.aborted) throw new GatewayError('request_cancelled', 'The client closed the connection.');
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
        signal: controller.signal,
        warn: (message) => metered.warn(model.id, message),
        onInputUsage: (usage) => (started.usage = usage),
        jsonTexts,
      };
    },
    attempts: metered.attempts,
    signal: controller.signal,
    health: deps.health,
  };

  try {
    const turn = { wire, parsed, prompt, candidates: plan.candidates, caller, metered, request, reply, started };
    await (parsed.stream ? streamAnswer(turn) : answerOnce(turn));
  } catch (error) {
    // A cancelled call still made the provider read the prompt: never bill it as zero.
    if (controller.signal.aborted && inFlight && !metered.hasAnswer) metered.answeredBy(inFlight, await estimateUsage(prompt, inFlight, ''), true);
    throw error;
  }
}

async function answerOnce<Parsed extends ParsedChat>(turn: ChatTurn<Parsed>): Promise<void> {
  const { wire, parsed, prompt, candidates, caller, metered, request, reply } = turn;
  const { model, result } = await generateWithFallback(candidates, caller);
  const usage = result.usage ?? (await estimateUsage(prompt, model, answerText(result)));
  metered.answeredBy(model, usage, !result.usage);
  metered.firstToken();
  const context = { id: wire.answerId(request.requestId), created: Math.floor(Date.now() / 1000), model: model.id };
  const body = wire.renderResult(context, result, usage, parsed);
  await metered.settle('succeeded', null);
  reply.header('x-svc-model', model.id).send(body);
}

function answerText(result: ChatResult): string {
  return result.content + (result.reasoning ?? '') + result.toolCalls.map((call) => call.name + call.arguments).join('');
}

/**
 * Streaming: candidates are tried until one yields its first part (an error before that is
 * an ordinary JSON error response). From then on the stream belongs to that model: a failure
 * ends it with an error event and no terminator, a client that leaves stops the provider.
 */
async function streamAnswer<Parsed extends ParsedChat>(turn: ChatTurn<Parsed>): Promise<void> {
  const { wire, parsed, prompt, candidates, caller, metered, request, reply, started } = turn;
  const opened = await openStreamWithFallback(candidates, caller);
  metered.firstToken();
  const startUsage =
    started.usage ??
    (wire.startsWithUsage ? { inputTokens: await prompt.fairCount(opened.model), cachedInputTokens: 0, cacheWriteTokens: 0 } : undefined);
  const context = { id: wire.answerId(request.requestId), created: Math.floor(Date.now() / 1000), model: opened.model.id, startUsage };
  const encoder = wire.createEncoder(context, parsed);
  reply.hijack();
  const writer = new SseWriter(reply.raw);
  writer.open({ ...(reply.getHeaders() as Record<string, string>), 'x-svc-model': opened.model.id });

  const answer = new StreamedAnswer(metered, opened.model, prompt, opened.startedAt);
  try {
    await writer.write(encoder.start());
    let part = opened.first;
    while (part.type !== 'finish') {
      answer.forwarded(part);
      // Awaited only when the client reads slower than we write: no promise per part otherwise.
      const drained = writer.write(encoder.part(part));
      if (drained) await drained;
      const next = await opened.rest.next();
      if (next.done) throw new ProviderError('unavailable', 'the provider stream ended before it finished');
      part = next.value;
    }
    // Let the adapter finish reading its upstream body (keeps the connection reusable).
    void opened.rest.return?.();
    const usage = await answer.succeeded(part.usage);
    // The finish leaves with the usage and the end, in one write once the receipt committed: sent
    // before the settlement, it went out alone while the commit was awaited.
    await writer.write(encoder.part(part) + encoder.end(usage));
  } catch (error) {
    void opened.rest.return?.();
    if (caller.signal.aborted) {
      await answer.cancelled();
    } else {
      const failure = midStreamError(opened.model, error);
      if (failure.code === 'internal_error') request.log.error({ err: error, requestId: request.requestId }, 'stream failed');
      // The receipt first, so it exists once the client reads the error; the error event even when
      // the receipt cannot be written (the store failed: the hold stays and is recovered).
      try {
        await answer.failed(failure);
      } finally {
        await writer.write(encoder.fail(failure, request.requestId));
      }
    }
  } finally {
    writer.end();
  }
}
