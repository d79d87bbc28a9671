import {
  toolResultText,
  type ChatMessage,
  type ContentPart,
  type ReasoningEffort,
  type ResponseFormat,
  type ToolDefinition,
} from '../../canonical/chat-request.ts';
import { passThroughFor } from '../pass-through.ts';
import { warnAnthropicHeaders } from '../anthropic-betas.ts';
import type { ProviderCall } from '../../providers/provider.ts';

/** Gateway levels -> OpenAI reasoning_effort (https://platform.openai.com/docs/api-reference/chat/create). */
const OPENAI_EFFORT: Record<ReasoningEffort, string> = { low: 'low', medium: 'medium', xhigh: 'high' };

function convertParts(parts: ContentPart[]): Array<Record<string, unknown>> {
  return parts.map((part) =>
    part.type === 'text'
      ? { type: 'text', text: part.text }
      : { type: 'image_url', image_url: part.detail ? { url: part.url, detail: part.detail } : { url: part.url } },
  );
}

function convertMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: message.role, content: message.content };
    case 'user':
      return {
        role: 'user',
        content: message.content.length === 1 && message.content[0]!.type === 'text' ? message.content[0]!.text : convertParts(message.content),
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
      return { role: 'tool', tool_call_id: message.toolCallId, content: toolResultText(message.content) };
  }
}

/**
 * Canonical messages -> OpenAI messages. OpenAI tool messages hold text only, so images a tool
 * returned follow the run of tool results as one user message (a tool message must directly
 * follow its call, so they cannot come earlier).
 */
function convertMessages(messages: ChatMessage[]): Array<Record<string, unknown>> {
  const converted: Array<Record<string, unknown>> = [];
  let toolImages: ContentPart[] = [];
  const flushToolImages = () => {
    if (toolImages.length === 0) return;
    converted.push({ role: 'user', content: convertParts([{ type: 'text', text: 'Images returned by the tool calls above:' }, ...toolImages]) });
    toolImages = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flushToolImages();
    converted.push(convertMessage(message));
    if (message.role === 'tool' && typeof message.content !== 'string') toolImages.push(...message.content.filter((part) => part.type === 'image'));
  }
  flushToolImages();
  return converted;
}

/** Function tools only: a provider's built-in tools (an Anthropic `type` other than custom) mean nothing here. */
function isFunctionTool(tool: ToolDefinition): boolean {
  const type = tool.extra?.type;
  return type === undefined || type === 'custom' || type === 'function';
}

/** https://platform.openai.com/docs/guides/structured-outputs */
function responseFormat(format: ResponseFormat): Record<string, unknown> {
  if (format.type === 'json_object') return { type: 'json_object' };
  const { type: _type, ...spec } = format;
  return { type: 'json_schema', json_schema: spec };
}

/**
 * Canonical call -> OpenAI chat-completions body. Fields an OpenAI-format client sent that the
 * gateway does not read are forwarded unchanged; an Anthropic client's are translated where
 * OpenAI has an equivalent and otherwise dropped with a warning.
 */
export function convertToOpenAIRequest(call: ProviderCall, stream: boolean): Record<string, unknown> {
  const { request, model } = call;
  // Unknown client fields go first, so they can add to the body but never replace what we set.
  const fields = passThroughFor('openai', request.passThrough, call.warn);
  warnAnthropicHeaders(request.providerOptions?.anthropic, call.warn);
  const body: Record<string, unknown> = { ...fields, model: model.upstream, messages: convertMessages(request.messages) };
  if (request.responseFormat) body.response_format = responseFormat(request.responseFormat);
  // Reasoning models reject max_tokens; others (and many compatible servers) expect it.
  body[model.capabilities.reasoning ? 'max_completion_tokens' : 'max_tokens'] = call.maxOutputTokens;
  const tools = (request.tools ?? []).filter(isFunctionTool);
  if (tools.length) {
    body.tools = tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
        ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
      },
    }));
  }
  const choice = request.toolChoice;
  // A choice that named or needed only dropped tools goes too; otherwise it is sent as asked.
  const droppedTools = (request.tools?.length ?? 0) > tools.length;
  if (typeof choice === 'string') {
    if (!droppedTools || tools.length || choice === 'none') body.tool_choice = choice;
  } else if (choice !== undefined && (!droppedTools || tools.some((tool) => tool.name === choice.name))) {
    body.tool_choice = { type: 'function', function: { name: choice.name } };
  }
  if (request.parallelToolCalls !== undefined && tools.length) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop) body.stop = request.stop;
  if (call.reasoningEffort) body.reasoning_effort = OPENAI_EFFORT[call.reasoningEffort];
  if (stream) {
    body.stream = true;
    // Always ask for usage: billing needs it even when the client did not.
    body.stream_options = { ...(typeof fields.stream_options === 'object' ? fields.stream_options : {}), include_usage: true };
  }
  return body;
}
