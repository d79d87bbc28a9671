import type { MeteredRequest } from '../../billing/request-meter.ts';
import { StreamedAnswer } from '../../billing/streamed-answer.ts';
import type { Usage } from '../../canonical/chat-result.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import type { ModelConfig } from '../../config/schema.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { ChatWire, ParsedChat, StreamEncoder } from '../../formats/chat-wire.ts';
import { ProviderError } from '../../providers/provider-error.ts';
import { openStreamWithFallback, type CandidateCaller, type OpenedStream } from '../../routing/call-with-fallback.ts';
import { midStreamError } from '../../routing/mid-stream-error.ts';
import type { PromptMeasure } from '../../tokens/token-estimate.ts';
import { failedWith, type Ending } from '../request-lifecycle.ts';
import type { ChatExchange, EventWriter } from './chat-exchange.ts';

/** Everything one answer needs, once the route is planned. */
export interface ChatTurn<Parsed extends ParsedChat> {
  wire: ChatWire<Parsed>;
  parsed: Parsed;
  prompt: PromptMeasure;
  candidates: ModelConfig[];
  caller: CandidateCaller;
  metered: MeteredRequest;
  exchange: ChatExchange;
  started: { usage?: Usage };
  /** The answer's id and creation time, the same whichever candidate answers. */
  answer: { id: string; created: number };
}

/** One stream once its model answered: where it is written, and how. */
interface OpenAnswer {
  opened: OpenedStream;
  writer: EventWriter;
  encoder: StreamEncoder;
  answer: StreamedAnswer;
}

/**
 * Streaming: candidates are tried until one yields its first part (an error before that is
 * an ordinary JSON error response). From then on the stream belongs to that model: a failure
 * ends it with an error event and no terminator, a client that leaves stops the provider.
 * The last events leave once the request has settled (the ending's delivery).
 */
export async function streamAnswer<Parsed extends ParsedChat>(turn: ChatTurn<Parsed>): Promise<Ending> {
  const { wire, parsed, prompt, candidates, caller, metered, exchange, started, answer } = turn;
  const opened = await openStreamWithFallback(candidates, caller);
  metered.firstToken();
  const startUsage =
    started.usage ??
    (wire.startsWithUsage ? { inputTokens: await prompt.fairCount(opened.model), cachedInputTokens: 0, cacheWriteTokens: 0 } : undefined);
  const context = { ...answer, model: opened.model.id, startUsage };
  const encoder = wire.createEncoder(context, parsed);
  const writer = exchange.openStream({ 'x-svc-model': opened.model.id });
  const open: OpenAnswer = { opened, writer, encoder, answer: new StreamedAnswer(metered, opened.model, prompt, opened.startedAt) };
  try {
    return await forward(open, exchange);
  } catch (error) {
    void opened.rest.return?.();
    return caller.signal.aborted ? cancelled(open) : failed(open, exchange, error);
  }
}

/** Writes the parts as they come until the finish: the request succeeded, its finish and usage are yet to leave. */
async function forward({ opened, writer, encoder, answer }: OpenAnswer, exchange: ChatExchange): Promise<Ending> {
  await writer.write(encoder.start());
  let part: StreamPart = opened.first;
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
  const finish = part;
  return {
    status: 'succeeded',
    error: null,
    // The finish leaves with the usage and the end, in one write once the receipt committed: sent
    // before the settlement, it went out alone while the commit was awaited.
    deliver: async () => {
      await writer.write(encoder.part(finish) + encoder.end(usage));
      writer.end();
    },
    // No receipt, no finish: the client must not take the answer for a settled one.
    unrecorded: (error) => endWith(writer, encoder.fail(error, exchange.requestId)),
  };
}

/** The client left: what was generated so far is charged; nothing more is written. */
async function cancelled({ writer, answer }: OpenAnswer): Promise<Ending> {
  await answer.cancelled();
  const end = () => writer.end();
  return failedWith(new GatewayError('request_cancelled', 'The client closed the connection.'), { deliver: end, unrecorded: end });
}

/** The provider (or the gateway) failed after the answer began: the stream ends with an error event, receipt or not. */
async function failed({ opened, writer, encoder, answer }: OpenAnswer, exchange: ChatExchange, error: unknown): Promise<Ending> {
  const failure = midStreamError(opened.model, error);
  if (failure.code === 'internal_error') exchange.log.error({ err: error, requestId: exchange.requestId }, 'stream failed');
  await answer.failed(failure);
  const end = () => endWith(writer, encoder.fail(failure, exchange.requestId));
  return failedWith(failure, { deliver: end, unrecorded: end });
}

async function endWith(writer: EventWriter, text: string): Promise<void> {
  await writer.write(text);
  writer.end();
}
