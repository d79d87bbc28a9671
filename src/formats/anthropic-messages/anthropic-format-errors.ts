/** Thrown by the pure converters when Anthropic's answer does not have the documented shape. */
export class AnthropicFormatError extends Error {
  override readonly name = 'AnthropicFormatError';
}

/** Thrown by the stream converter for an `event: error` or a stream cut before message_stop. */
export class AnthropicStreamInterrupted extends Error {
  override readonly name = 'AnthropicStreamInterrupted';
}

/** `{type:'error', error:{type, message}}` -> "type: message". */
export function describeError(payload: unknown): string | undefined {
  const error = (payload as { error?: { type?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.message !== 'string') return undefined;
  return typeof error.type === 'string' ? `${error.type}: ${error.message}` : error.message;
}
