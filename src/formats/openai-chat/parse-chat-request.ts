import { parseRouting } from '../parse-routing.ts';
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  ReasoningEffort,
  ResponseFormat,
  ToolCall,
  ToolChoice,
  ToolDefinition,
} from '../../canonical/chat-request.ts';
import { invalid, isObject, optionalBoolean, optionalNumber, positiveInteger } from '../read-fields.ts';

/** What the gateway itself reads from an OpenAI chat-completions body, beside the canonical request. */
export interface ParsedChatCompletion {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  routing: { fallback: boolean; allowedModels?: string[] };
  request: ChatRequest;
}

const KNOWN_FIELDS = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'temperature',
  'top_p',
  'stop',
  'reasoning_effort',
  'routing',
  'response_format',
]);

const EFFORTS: Record<string, ReasoningEffort> = { low: 'low', medium: 'medium', xhigh: 'xhigh', high: 'xhigh' };

function textOf(content: unknown, field: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) invalid(`${field} must be a string or an array of text parts`);
  return content
    .map((part, index) => {
      if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
        invalid(`${field}[${index}] must be a text part`);
      }
      return part.text;
    })
    .join('');
}

function userParts(content: unknown, field: string): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) invalid(`${field} must be a string or an array of content parts`);
  return content.map((part, index): ContentPart => {
    const at = `${field}[${index}]`;
    if (!isObject(part)) invalid(`${at} must be an object`);
    if (part.type === 'text') {
      if (typeof part.text !== 'string') invalid(`${at}.text must be a string`);
      return { type: 'text', text: part.text };
    }
    if (part.type === 'image_url') {
      const image = part.image_url;
      const url = isObject(image) ? image.url : undefined;
      if (typeof url !== 'string' || url === '') invalid(`${at}.image_url.url must be a string`);
      const detail = isObject(image) ? image.detail : undefined;
      if (detail !== undefined && detail !== 'auto' && detail !== 'low' && detail !== 'high') {
        invalid(`${at}.image_url.detail must be auto, low or high`);
      }
      return detail ? { type: 'image', url, detail } : { type: 'image', url };
    }
    return invalid(`${at}.type must be text or image_url`);
  });
}

function toolCalls(value: unknown, field: string): ToolCall[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) invalid(`${field} must be an array`);
  return value.map((call, index) => {
    const at = `${field}[${index}]`;
    const fn = isObject(call) ? call.function : undefined;
    if (!isObject(call) || typeof call.id !== 'string' || !isObject(fn) || typeof fn.name !== 'string') {
      invalid(`${at} must have id and function.name`);
    }
    const args = fn.arguments ?? '';
    if (typeof args !== 'string') invalid(`${at}.function.arguments must be a string`);
    return { id: call.id, name: fn.name, arguments: args };
  });
}

function message(value: unknown, index: number): ChatMessage {
  const at = `messages[${index}]`;
  if (!isObject(value)) invalid(`${at} must be an object`);
  switch (value.role) {
    case 'system':
    case 'developer':
      return { role: value.role, content: textOf(value.content, `${at}.content`) };
    case 'user':
      return { role: 'user', content: userParts(value.content, `${at}.content`) };
    case 'assistant': {
      const calls = toolCalls(value.tool_calls, `${at}.tool_calls`);
      const content = value.content === undefined || value.content === null ? null : textOf(value.content, `${at}.content`);
      if (content === null && !calls?.length) invalid(`${at} needs content or tool_calls`);
      return calls?.length ? { role: 'assistant', content, toolCalls: calls } : { role: 'assistant', content };
    }
    case 'tool':
      if (typeof value.tool_call_id !== 'string') invalid(`${at}.tool_call_id is required`);
      return { role: 'tool', toolCallId: value.tool_call_id, content: textOf(value.content, `${at}.content`) };
    default:
      return invalid(`${at}.role must be one of system, developer, user, assistant, tool`);
  }
}

function tools(value: unknown): ToolDefinition[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) invalid('tools must be an array');
  return value.map((tool, index) => {
    const fn = isObject(tool) ? tool.function : undefined;
    if (!isObject(tool) || tool.type !== 'function' || !isObject(fn) || typeof fn.name !== 'string') {
      invalid(`tools[${index}] must be {type: "function", function: {name, ...}}`);
    }
    const definition: ToolDefinition = { name: fn.name };
    if (typeof fn.description === 'string') definition.description = fn.description;
    if (isObject(fn.parameters)) definition.parameters = fn.parameters;
    if (typeof fn.strict === 'boolean') definition.strict = fn.strict;
    return definition;
  });
}

function toolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'auto' || value === 'none' || value === 'required') return value;
  if (isObject(value) && isObject(value.function) && typeof value.function.name === 'string') {
    return { name: value.function.name };
  }
  return invalid('tool_choice must be auto, none, required or {type: "function", function: {name}}');
}

function stop(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((entry) => typeof entry === 'string')) return value;
  return invalid('stop must be a string or an array of strings');
}

/**
 * OpenAI `response_format` (https://platform.openai.com/docs/api-reference/chat/create#response_format);
 * `text` is the default and asks for nothing.
 */
export function parseResponseFormat(value: unknown, field = 'response_format'): ResponseFormat | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) invalid(`${field} must be an object`);
  if (value.type === 'text') return undefined;
  if (value.type === 'json_object') return { type: 'json_object' };
  if (value.type !== 'json_schema') invalid(`${field}.type must be text, json_object or json_schema`);
  const spec = value.json_schema;
  if (!isObject(spec) || typeof spec.name !== 'string' || !isObject(spec.schema)) invalid(`${field}.json_schema needs name and schema`);
  const format: ResponseFormat = { type: 'json_schema', name: spec.name, schema: spec.schema };
  if (typeof spec.description === 'string') format.description = spec.description;
  if (typeof spec.strict === 'boolean') format.strict = spec.strict;
  return format;
}

/** Validate an OpenAI chat-completions body and translate it to the canonical request. */
export function parseChatCompletionRequest(body: unknown): ParsedChatCompletion {
  if (!isObject(body)) invalid('the body must be a JSON object');
  if (typeof body.model !== 'string' || body.model === '') invalid('model is required');
  if (!Array.isArray(body.messages) || body.messages.length === 0) invalid('messages is required and must be a non-empty array');

  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null && !isObject(streamOptions)) invalid('stream_options must be an object');
  const effortText = body.reasoning_effort;
  let reasoningEffort: ReasoningEffort | undefined;
  if (effortText !== undefined && effortText !== null) {
    reasoningEffort = typeof effortText === 'string' ? EFFORTS[effortText] : undefined;
    if (!reasoningEffort) invalid('reasoning_effort must be one of low, medium, xhigh');
  }

  const fields: Record<string, unknown> = {};
  for (const key in body) if (!KNOWN_FIELDS.has(key)) fields[key] = body[key];

  const request: ChatRequest = { messages: body.messages.map(message), passThrough: { format: 'openai', fields } };
  const format = parseResponseFormat(body.response_format);
  if (format) request.responseFormat = format;
  const maxOutput = positiveInteger(body.max_completion_tokens, 'max_completion_tokens') ?? positiveInteger(body.max_tokens, 'max_tokens');
  if (maxOutput !== undefined) request.maxOutputTokens = maxOutput;
  const toolList = tools(body.tools);
  if (toolList) request.tools = toolList;
  const choice = toolChoice(body.tool_choice);
  if (choice) request.toolChoice = choice;
  const parallel = optionalBoolean(body.parallel_tool_calls, 'parallel_tool_calls');
  if (parallel !== undefined) request.parallelToolCalls = parallel;
  const temperature = optionalNumber(body.temperature, 'temperature');
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optionalNumber(body.top_p, 'top_p');
  if (topP !== undefined) request.topP = topP;
  const stopList = stop(body.stop);
  if (stopList) request.stop = stopList;
  if (reasoningEffort) request.reasoningEffort = reasoningEffort;

  return {
    model: body.model,
    stream: optionalBoolean(body.stream, 'stream') ?? false,
    includeUsage: isObject(streamOptions) && streamOptions.include_usage === true,
    routing: parseRouting(body.routing),
    request,
  };
}
