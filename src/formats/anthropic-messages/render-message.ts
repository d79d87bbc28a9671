import type { ChatResult, FinishReason, ResultReasoningBlock, Usage } from '../../canonical/chat-result.ts';

/**
 * Canonical finish reason -> Anthropic stop_reason.
 * https://docs.anthropic.com/en/api/handling-stop-reasons
 */
export function renderStopReason(finishReason: FinishReason, stopSequence: string | undefined): string {
  switch (finishReason) {
    case 'stop':
      return stopSequence === undefined ? 'end_turn' : 'stop_sequence';
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
  }
}

/** Anthropic usage: input_tokens leaves out the tokens read from and written to the cache. */
export function renderAnthropicUsage(usage: Usage) {
  return {
    input_tokens: Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens),
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cachedInputTokens,
    output_tokens: usage.outputTokens,
  };
}

/** Tool arguments as the object Anthropic clients expect; arguments a model got wrong become `{}`. */
export function toolInput(argumentsText: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(argumentsText === '' ? '{}' : argumentsText);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function thinkingBlocks(result: ChatResult): ResultReasoningBlock[] {
  if (result.reasoningBlocks?.length) return result.reasoningBlocks;
  // Reasoning from a provider that does not sign it (OpenAI-compatible) is shown, unsigned.
  return result.reasoning ? [{ text: result.reasoning }] : [];
}

/** Anthropic's own data goes back as it came: a redacted block, or thinking with its signature ("" when unsigned). */
function thinkingBlock(block: ResultReasoningBlock): Record<string, unknown> {
  const anthropic = block.providerMetadata?.anthropic;
  if (anthropic?.redactedData !== undefined) return { type: 'redacted_thinking', data: anthropic.redactedData };
  return { type: 'thinking', thinking: block.text, signature: anthropic?.signature ?? '' };
}

/** Anthropic's message id for a request id: `req_<id>` -> `msg_<id>`. */
export function messageId(requestId: string): string {
  return `msg_${requestId.slice(4)}`;
}

/** A non-streaming Messages API answer. https://docs.anthropic.com/en/api/messages#response */
export function renderMessage(options: { id: string; model: string; result: ChatResult; usage: Usage }) {
  const { result } = options;
  const content: Array<Record<string, unknown>> = thinkingBlocks(result).map(thinkingBlock);
  if (result.content !== '') content.push({ type: 'text', text: result.content });
  for (const call of result.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call.arguments) });
  return {
    id: options.id,
    type: 'message',
    role: 'assistant',
    model: options.model,
    content,
    stop_reason: renderStopReason(result.finishReason, result.stopSequence),
    stop_sequence: result.finishReason === 'stop' ? (result.stopSequence ?? null) : null,
    usage: renderAnthropicUsage(options.usage),
  };
}
