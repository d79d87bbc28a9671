import type { ChatMessage, ImagePart, PartOptions, ReasoningBlock, TextPart, ToolCall } from '../canonical/chat-request.ts';
import type { FinishReason, Usage } from '../canonical/chat-result.ts';
import type { StreamPart } from '../canonical/stream-part.ts';

/**
 * Test-only builders of canonical values, so that a test's messages and streams read as what they
 * carry. Each returns the plain object written out, nothing more: `textDeltas('a', 'b')` is
 * `[{ type: 'text-delta', text: 'a' }, { type: 'text-delta', text: 'b' }]`.
 */

/** Usage with the given input and output tokens, the other counts 0 unless `more` sets them. */
export const usage = (inputTokens: number, outputTokens: number, more: Partial<Usage> = {}): Usage => ({
  inputTokens,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens,
  reasoningTokens: 0,
  ...more,
});

/** One text delta a text, in order. */
export const textDeltas = (...texts: string[]): StreamPart[] => texts.map((text) => ({ type: 'text-delta', text }));

/** One reasoning delta a text, in order. */
export const reasoningDeltas = (...texts: string[]): StreamPart[] => texts.map((text) => ({ type: 'reasoning-delta', text }));

/** The end of a reasoning block Anthropic signed, as streamed. */
export const signedReasoningEnd = (signature: string): StreamPart => ({ type: 'reasoning-end', providerMetadata: { anthropic: { signature } } });

/** A block of redacted thinking, as streamed: a reasoning block with no text that ends at once. */
export const redactedReasoningEnd = (redactedData: string): StreamPart => ({
  type: 'reasoning-end',
  providerMetadata: { anthropic: { redactedData } },
});

/** Reasoning sent back with Anthropic's signature over it. */
export const signedReasoning = (text: string, signature: string): ReasoningBlock => ({ text, providerOptions: { anthropic: { signature } } });

/** Redacted thinking sent back: no text, Anthropic's encrypted data. */
export const redactedReasoning = (redactedData: string): ReasoningBlock => ({ text: '', providerOptions: { anthropic: { redactedData } } });

/** A tool call as streamed: its start, then one delta a fragment of its arguments. */
export const toolCallParts = (index: number, id: string, name: string, ...argumentsDeltas: string[]): StreamPart[] => [
  { type: 'tool-call-start', index, id, name },
  ...argumentsDeltas.map((argumentsDelta): StreamPart => ({ type: 'tool-call-delta', index, argumentsDelta })),
];

/** The finish part; `more` adds usage or the stop sequence (absent, they are left out, not undefined). */
export const finish = (finishReason: FinishReason, more: { usage?: Usage; stopSequence?: string } = {}): StreamPart => ({
  type: 'finish',
  finishReason,
  ...more,
});

/** A canonical text part. */
export const text = (text: string, more: Omit<TextPart, 'type' | 'text'> = {}): TextPart => ({ type: 'text', text, ...more });

/** A canonical image part. */
export const image = (url: string, more: Omit<ImagePart, 'type' | 'url'> = {}): ImagePart => ({ type: 'image', url, ...more });

/** A canonical tool call. */
export const toolCall = (id: string, name: string, args: string): ToolCall => ({ id, name, arguments: args });

/** A tool message: the result of the call `toolCallId`. */
export const toolResult = (
  toolCallId: string,
  content: string | Array<TextPart | ImagePart>,
  more: { isError?: boolean; providerOptions?: PartOptions } = {},
): ChatMessage => ({ role: 'tool', toolCallId, content, ...more });
