import type { ChatResult, Usage } from '../../canonical/chat-result.ts';

/** OpenAI usage object from canonical usage (prompt tokens include cached ones). */
export function renderOpenAIUsage(usage: Usage) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

/** A non-streaming chat.completion body. */
export function renderChatCompletion(options: { id: string; created: number; model: string; result: ChatResult; usage: Usage }) {
  const { result } = options;
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: result.toolCalls.length && result.content === '' ? null : result.content,
    refusal: null,
  };
  if (result.reasoning) message.reasoning_content = result.reasoning;
  if (result.toolCalls.length) {
    message.tool_calls = result.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: options.id,
    object: 'chat.completion',
    created: options.created,
    model: options.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: result.finishReason }],
    usage: renderOpenAIUsage(options.usage),
  };
}
