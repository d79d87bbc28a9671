import { toolResultText, type ChatMessage, type ContentPart, type ReasoningEffort, type ToolDefinition } from '../../protocol/canonical/chat-request.ts';
import type { ProviderCall } from '../provider.ts';

/** Gateway levels -> OpenAI reasoning_effort (https://platform.openai.com/docs/api-reference/chat/create). */
const OPENAI_EFFORT: Record<ReasoningEffort, string> = { low: 'low', medium: 'medium', xhigh: 'high' };

/**
 * Fields of the Anthropic Messages format that OpenAI-compatible servers reject or misread
 * (OpenAI's `metadata` is a string map for stored completions; Groq and others refuse unknown
 * fields). A Messages request served by an OpenAI-compatible model drops them instead of
 * failing; every other unknown field is still forwarded. The mirror of OPENAI_ONLY_FIELDS in
 * ../anthropic/convert-to-anthropic-request.ts.
 */
const ANTHROPIC_ONLY_FIELDS = new Set([
  'metadata', 'context_management', 'top_k', 'container', 'mcp_servers', 'output_config', 'thinking', 'system',
  'stop_sequences', 'anthropic_version', 'anthropic_beta', 'betas', 'cache_control', 'inference_geo',
]);

/** service_tier values OpenAI knows; Anthropic's `standard_only` is not one. */
const OPENAI_SERVICE_TIERS = new Set(['auto', 'default', 'flex', 'scale', 'priority']);

function forwardableExtra(extra: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key in extra) if (!ANTHROPIC_ONLY_FIELDS.has(key)) kept[key] = extra[key];
  if (kept.service_tier !== undefined && !OPENAI_SERVICE_TIERS.has(kept.service_tier as string)) delete kept.service_tier;
  return kept;
}

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

/** Canonical call -> OpenAI chat-completions body; unknown client fields are forwarded unchanged. */
export function convertToOpenAIRequest(call: ProviderCall, stream: boolean): Record<string, unknown> {
  const { request, model } = call;
  const body: Record<string, unknown> = { ...forwardableExtra(request.extra), model: model.upstream, messages: convertMessages(request.messages) };
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
    body.stream_options = { ...(typeof request.extra.stream_options === 'object' ? request.extra.stream_options : {}), include_usage: true };
  }
  return body;
}
