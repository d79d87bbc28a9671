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
import { invalid } from '../read-fields.ts';
import { bodyValidator } from '../validate-body.ts';
import { fieldsOf, type Infer } from '../../lib/wire-schema.ts';
import {
  chatCompletionRequestSchema,
  type ChatCompletionRequestBody,
  type ChatMessageBody,
  type responseFormatSchema,
} from './chat-request-schema.ts';

/** What the gateway itself reads from an OpenAI chat-completions body, beside the canonical request. */
export interface ParsedChatCompletion {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  routing: { fallback: boolean; allowedModels?: string[] };
  request: ChatRequest;
}

/** The chat-completions body checker (compiled at start, see body-validators.ts). */
export const readChatCompletionBody = bodyValidator(chatCompletionRequestSchema);
const KNOWN_FIELDS = fieldsOf(chatCompletionRequestSchema);

const EFFORTS: Record<string, ReasoningEffort> = { low: 'low', medium: 'medium', xhigh: 'xhigh', high: 'xhigh' };

type TextContent = Extract<ChatMessageBody, { role: 'tool' }>['content'];
type UserContent = Extract<ChatMessageBody, { role: 'user' }>['content'];

const textOf = (content: TextContent): string => (typeof content === 'string' ? content : content.map((part) => part.text).join(''));

function userParts(content: UserContent): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part): ContentPart => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    const { url, detail } = part.image_url;
    return detail ? { type: 'image', url, detail } : { type: 'image', url };
  });
}

function message(value: ChatMessageBody, index: number): ChatMessage {
  switch (value.role) {
    case 'system':
    case 'developer':
      return { role: value.role, content: textOf(value.content) };
    case 'user':
      return { role: 'user', content: userParts(value.content) };
    case 'assistant': {
      const calls = value.tool_calls?.map((call): ToolCall => ({ id: call.id, name: call.function.name, arguments: call.function.arguments ?? '' }));
      const content = value.content === undefined || value.content === null ? null : textOf(value.content);
      if (content === null && !calls?.length) invalid(`messages[${index}] needs content or tool_calls`);
      return calls?.length ? { role: 'assistant', content, toolCalls: calls } : { role: 'assistant', content };
    }
    case 'tool':
      return { role: 'tool', toolCallId: value.tool_call_id, content: textOf(value.content) };
  }
}

function tools(value: ChatCompletionRequestBody['tools']): ToolDefinition[] | undefined {
  return value?.map(({ function: fn }) => {
    const definition: ToolDefinition = { name: fn.name };
    if (typeof fn.description === 'string') definition.description = fn.description;
    if (fn.parameters) definition.parameters = fn.parameters;
    if (typeof fn.strict === 'boolean') definition.strict = fn.strict;
    return definition;
  });
}

function toolChoice(value: ChatCompletionRequestBody['tool_choice']): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : { name: value.function.name };
}

/**
 * OpenAI `response_format` (https://platform.openai.com/docs/api-reference/chat/create#response_format);
 * `text` is the default and asks for nothing.
 */
export function responseFormatOf(value: Infer<typeof responseFormatSchema> | null | undefined): ResponseFormat | undefined {
  if (value?.type === 'json_object') return { type: 'json_object' };
  if (value?.type !== 'json_schema') return undefined;
  const spec = value.json_schema;
  const format: ResponseFormat = { type: 'json_schema', name: spec.name, schema: spec.schema };
  if (typeof spec.description === 'string') format.description = spec.description;
  if (typeof spec.strict === 'boolean') format.strict = spec.strict;
  return format;
}

const stop = (value: string | string[] | null | undefined) => (typeof value === 'string' ? [value] : (value ?? undefined));

/** Validate an OpenAI chat-completions body and translate it to the canonical request. */
export function parseChatCompletionRequest(raw: unknown): ParsedChatCompletion {
  const body = readChatCompletionBody(raw);
  const fields: Record<string, unknown> = {};
  for (const key in body) if (!KNOWN_FIELDS.has(key)) fields[key] = (body as Record<string, unknown>)[key];

  const request: ChatRequest = { messages: body.messages.map(message), passThrough: { format: 'openai', fields } };
  const format = responseFormatOf(body.response_format);
  if (format) request.responseFormat = format;
  const maxOutput = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxOutput === 'number') request.maxOutputTokens = maxOutput;
  const toolList = tools(body.tools);
  if (toolList) request.tools = toolList;
  const choice = toolChoice(body.tool_choice);
  if (choice) request.toolChoice = choice;
  if (typeof body.parallel_tool_calls === 'boolean') request.parallelToolCalls = body.parallel_tool_calls;
  if (typeof body.temperature === 'number') request.temperature = body.temperature;
  if (typeof body.top_p === 'number') request.topP = body.top_p;
  const stopList = stop(body.stop);
  if (stopList) request.stop = stopList;
  if (body.reasoning_effort) request.reasoningEffort = EFFORTS[body.reasoning_effort];

  return {
    model: body.model,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage === true,
    routing: parseRouting(body.routing),
    request,
  };
}
