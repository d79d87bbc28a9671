import type { IncomingHttpHeaders } from 'node:http';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ChatResult, Usage } from '../canonical/chat-result.ts';
import type { StreamPart } from '../canonical/stream-part.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { RoutingOptions } from '../routing/plan-route.ts';
import type { StreamRelay } from '../providers/provider.ts';

/** What every chat wire format parses into. */
export interface ParsedChat {
  model: string;
  stream: boolean;
  routing: RoutingOptions;
  request: ChatRequest;
}

export interface AnswerContext {
  id: string;
  created: number;
  /** Concrete id of the model that answered. */
  model: string;
  /** Streams: the prompt count known at the start (the provider's when it gave one, else the gateway's count). */
  startUsage?: Pick<Usage, 'inputTokens' | 'cachedInputTokens' | 'cacheWriteTokens'>;
}

export interface StreamEncoder {
  start(): string;
  part(part: StreamPart): string;
  /** After the finish part: trailing events (usage, terminator). */
  end(usage: Usage): string;
  /** A failure after the stream began; the stream closes after it. */
  fail(error: GatewayError, requestId: string): string;
}

/** One wire format's side of a chat request: parse the body, render the answer. */
export interface ChatWire<Parsed extends ParsedChat> {
  /** Validate the body; headers carry what some formats keep there (Anthropic's beta flags). */
  parse(body: unknown, headers: IncomingHttpHeaders): Parsed;
  renderResult(context: AnswerContext, result: ChatResult, usage: Usage, parsed: Parsed): unknown;
  createEncoder(context: AnswerContext, parsed: Parsed): StreamEncoder;
  /** Completion id for the answer body, from the request id suffix. */
  answerId(requestId: string): string;
  /** A stream's relay for a provider of this format (ProviderCall.relay): absent for formats no provider speaks. */
  relayFor?(context: AnswerContext, parsed: Parsed): StreamRelay;
  /** Its stream opens with the prompt count (Anthropic's message_start): count the prompt when the provider gave none. */
  readonly startsWithUsage?: boolean;
}
