import type { ChatMessage, ReasoningEffort } from '../../protocol/canonical/chat-request.ts';
import type { ProviderCall } from '../provider.ts';

/** Gateway levels -> OpenAI reasoning_effort (https://platform.openai.com/docs/api-reference/chat/create). */
const OPENAI_EFFORT: Record<ReasoningEffort, string> = { low: 'low', medium: 'medium', xhigh: 'high' };

function convertMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: message.role, content: message.content };
    case 'user':
      return {
        role: 'user',
        content:
          message.content.length === 1 && message.content[0]!.type === 'text'
            ? message.content[0]!.text
            : message.content.map((part) =>
                part.type === 'text'
                  ? { type: 'text', text: part.text }
                  : { type: 'image_url', image_url: part.detail ? { url: part.url, detail: part.detail } : { url: part.url } },
              ),
      };
    case 'assistant': {
      const converted: Record<string, unknown> = { role: 'assistant', content: message.content };
      if (message.toolCalls?.length) {
        converted.tool_calls = message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        }));
      }
      return converted;
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

/** Canonical call -> OpenAI chat-completions body; unknown client fields are forwarded unchanged. */
export function convertToOpenAIRequest(call: ProviderCall, stream: boolean): Record<string, unknown> {
  const { request, model } = call;
  const body: Record<string, unknown> = { ...request.extra, model: model.upstream, messages: request.messages.map(convertMessage) };
  // Reasoning models reject max_tokens; others (and many compatible servers) expect it.
  body[model.capabilities.reasoning ? 'max_completion_tokens' : 'max_tokens'] = call.maxOutputTokens;
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
        ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
      },
    }));
  }
  if (request.toolChoice !== undefined) {
    body.tool_choice = typeof request.toolChoice === 'string' ? request.toolChoice : { type: 'function', function: { name: request.toolChoice.name } };
  }
  if (request.parallelToolCalls !== undefined && request.tools?.length) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop) body.stop = request.stop;
  if (call.reasoningEffort) body.reasoning_effort = OPENAI_EFFORT[call.reasoningEffort];
  if (stream) {
    body.stream = true;
    // Always ask for usage: billing needs it even when the client did not.
    body.stream_options = { ...(typeof request.extra.stream_options === 'object' ? request.extra.stream_options : {}), include_usage: true };
  }
  return body;
}
