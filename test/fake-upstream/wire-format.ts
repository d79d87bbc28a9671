import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { ResolvedReply } from './scripted-reply.ts';

/** One server-sent event the fake will write. */
export interface WireEvent {
  /** Written as `event: <name>` before the data; OpenAI's format has none. */
  event?: string;
  data: string;
  /** True for events that carry generated content; the stream faults count these. */
  content: boolean;
}

/** Everything that differs between the OpenAI and the Anthropic wire format. */
export interface WireFormat {
  readonly path: string;
  /** Why the real API would reject this request with a 400, or undefined when it is fine. */
  validate(headers: IncomingHttpHeaders, body: Record<string, unknown>): string | undefined;
  newToolCallId(): string;
  /** Prompt tokens the real API would report for this body (see count-prompt-tokens.ts). */
  countPromptTokens(body: Record<string, unknown>): number;
  /** Tokens of generated text, with the provider's tokenizer (or its stand-in). */
  countTextTokens(text: string): number;
  responseHeaders(): Record<string, string>;
  /** The complete non-streaming body. */
  body(reply: ResolvedReply, request: Record<string, unknown>): unknown;
  /** Every event of the streaming answer, in order. */
  streamEvents(reply: ResolvedReply, request: Record<string, unknown>): WireEvent[];
  /** The error body the real API sends with this status. */
  errorBody(status: number, message?: string): unknown;
  /** What the real API sends when it fails in the middle of a stream. */
  streamErrorEvent(): WireEvent;
}

export function randomId(length: number): string {
  return randomBytes(Math.ceil(length / 2))
    .toString('hex')
    .slice(0, length);
}

export function serializeEvent(event: Pick<WireEvent, 'event' | 'data'>): string {
  return (event.event === undefined ? '' : `event: ${event.event}\n`) + `data: ${event.data}\n\n`;
}
