import type { ChatRequest, ReasoningEffort, RequestOptions, ResponseFormat, ToolChoice, ToolDefinition } from '../../canonical/chat-request.ts';
import { parseRouting } from '../parse-routing.ts';
import { bodyValidator } from '../validate-body.ts';
import { fieldsOf } from '../../lib/wire-schema.ts';
import { messagesRequestSchema, type MessagesRequestBody } from './messages-request-schema.ts';
import { convertMessage, systemMessages } from './parse-message-content.ts';

/** What the gateway itself reads from an Anthropic Messages body, beside the canonical request. */
export interface ParsedMessagesRequest {
  model: string;
  stream: boolean;
  /** clampMaxOutput is always on: Anthropic clients must send max_tokens, so they send a large one. */
  routing: { fallback: boolean; allowedModels?: string[]; clampMaxOutput: boolean };
  request: ChatRequest;
}

/** The Messages body checker (compiled at start, see body-validators.ts). */
export const readMessagesBody = bodyValidator(messagesRequestSchema);
/** Fields read here; every other field passes through, for an Anthropic model to get as sent (top_k is checked first). */
const KNOWN_FIELDS = fieldsOf(messagesRequestSchema, ['top_k']);

/** output_config.effort -> gateway level. https://docs.anthropic.com/en/docs/build-with-claude/effort */
const EFFORTS: Record<string, ReasoningEffort> = { low: 'low', medium: 'medium', high: 'xhigh', max: 'xhigh' };

/** A thinking budget -> the nearest gateway level (whose budgets are 2K, 8K and 24K tokens). */
function effortOfBudget(budget: number): ReasoningEffort {
  if (budget < 4_096) return 'low';
  if (budget < 16_384) return 'medium';
  return 'xhigh';
}

function tools(value: MessagesRequestBody['tools']): ToolDefinition[] | undefined {
  return value?.map((tool) => {
    const { name, description, input_schema: schema, cache_control: cacheControl, ...extra } = tool;
    const definition: ToolDefinition = { name };
    if (typeof description === 'string') definition.description = description;
    if (schema !== undefined) definition.parameters = schema;
    if (cacheControl) definition.providerOptions = { anthropic: { cacheControl } };
    // defer_loading, a built-in tool's type, strict, input_examples...: for an Anthropic model.
    if (Object.keys(extra).length > 0) definition.extra = extra;
    return definition;
  });
}

function toolChoice(value: MessagesRequestBody['tool_choice']): { choice?: ToolChoice; parallel?: boolean } {
  if (value === undefined || value === null) return {};
  if (value.type === 'none') return { choice: 'none' };
  const disable = value.disable_parallel_tool_use;
  const parallel = typeof disable === 'boolean' ? { parallel: !disable } : {};
  if (value.type === 'tool') return { choice: { name: value.name }, ...parallel };
  return { choice: value.type === 'any' ? 'required' : 'auto', ...parallel };
}

/**
 * `thinking` and `output_config.effort` -> the gateway's reasoning level. Effort wins over a
 * budget; adaptive thinking takes the alias default; no thinking at all is Anthropic's default,
 * off, and so is `disabled`.
 */
function reasoningEffort(body: MessagesRequestBody): ChatRequest['reasoningEffort'] {
  const { thinking } = body;
  const effort = body.output_config?.effort;
  const level = effort ? EFFORTS[effort] : undefined;
  if (thinking === undefined || thinking === null) return level ?? 'none';
  switch (thinking.type) {
    case 'disabled':
      return 'none';
    case 'enabled':
      return level ?? effortOfBudget(thinking.budget_tokens);
    default:
      // adaptive, and kinds added after this was written: the model decides, at the alias level.
      return level;
  }
}

/**
 * output_config without the effort (which became the reasoning level) and the format (which
 * became the response format); the rest goes on as sent.
 */
function outputConfigRest(value: MessagesRequestBody['output_config']): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  const { effort: _effort, format, ...others } = value;
  const rest: Record<string, unknown> = others;
  if (format !== undefined && !responseFormatOf(value)) rest.format = format;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** Anthropic structured outputs: `output_config.format` of type json_schema; another format passes through as sent. */
function responseFormatOf(outputConfig: MessagesRequestBody['output_config']): ResponseFormat | undefined {
  const format = outputConfig?.format;
  const schema = format?.schema;
  if (format?.type !== 'json_schema' || typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined;
  return { type: 'json_schema', name: 'output', schema: schema as Record<string, unknown> };
}

/** Values of the anthropic-beta header (comma-separated, possibly repeated). */
export function parseBetas(header: string | string[] | undefined): string[] | undefined {
  const values = (Array.isArray(header) ? header : header ? [header] : []).flatMap((value) => value.split(','));
  const betas = values.map((value) => value.trim()).filter(Boolean);
  return betas.length > 0 ? betas : undefined;
}

/** The anthropic-version header's value, if one was sent. */
export function parseVersion(header: string | string[] | undefined): string | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value || undefined;
}

/** Validate an Anthropic Messages body and translate it to the canonical request. */
export function parseMessagesRequest(raw: unknown, options: { betas?: string[]; version?: string } = {}): ParsedMessagesRequest {
  const body = readMessagesBody(raw);
  const fields: Record<string, unknown> = {};
  for (const key in body) if (!KNOWN_FIELDS.has(key)) fields[key] = (body as Record<string, unknown>)[key];
  const outputRest = outputConfigRest(body.output_config);
  if (outputRest) fields.output_config = outputRest;

  const system = body.system === undefined || body.system === null ? [] : systemMessages(body.system);
  const request: ChatRequest = { messages: [...system, ...body.messages.flatMap(convertMessage)], passThrough: { format: 'anthropic', fields } };
  const format = responseFormatOf(body.output_config);
  if (format) request.responseFormat = format;
  if (typeof body.max_tokens === 'number') request.maxOutputTokens = body.max_tokens;
  const toolList = tools(body.tools);
  if (toolList?.length) request.tools = toolList;
  const { choice, parallel } = toolChoice(body.tool_choice);
  if (choice) request.toolChoice = choice;
  if (parallel !== undefined) request.parallelToolCalls = parallel;
  if (typeof body.temperature === 'number') request.temperature = body.temperature;
  if (typeof body.top_p === 'number') request.topP = body.top_p;
  if (body.stop_sequences?.length) request.stop = body.stop_sequences;
  const effort = reasoningEffort(body);
  if (effort) request.reasoningEffort = effort;
  const anthropic: NonNullable<RequestOptions['anthropic']> = {};
  // An Anthropic model gets the client's own budget back.
  if (effort !== 'none' && body.thinking?.type === 'enabled') anthropic.thinkingBudgetTokens = body.thinking.budget_tokens;
  if (options.betas?.length) anthropic.betas = options.betas;
  if (options.version) anthropic.version = options.version;
  if (Object.keys(anthropic).length > 0) request.providerOptions = { anthropic };

  return { model: body.model, stream: body.stream === true, routing: { ...parseRouting(body.routing), clampMaxOutput: true }, request };
}
