import type { ChatRequest, ReasoningEffort, RequestOptions, ResponseFormat, ToolChoice, ToolDefinition } from '../../canonical/chat-request.ts';
import { parseRouting } from '../parse-routing.ts';
import { convertMessage, systemMessages } from './parse-message-content.ts';
import { invalid, isObject, optionalNumber, positiveInteger } from '../read-fields.ts';

/** What the gateway itself reads from an Anthropic Messages body, beside the canonical request. */
export interface ParsedMessagesRequest {
  model: string;
  stream: boolean;
  /** clampMaxOutput is always on: Anthropic clients must send max_tokens, so they send a large one. */
  routing: { fallback: boolean; allowedModels?: string[]; clampMaxOutput: boolean };
  request: ChatRequest;
}

/** Fields read here; every other field passes through, for an Anthropic model to get as sent. */
const KNOWN_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'stream',
  'stop_sequences',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'routing',
]);

/** output_config.effort -> gateway level. https://docs.anthropic.com/en/docs/build-with-claude/effort */
const EFFORTS: Record<string, ReasoningEffort> = { low: 'low', medium: 'medium', high: 'xhigh', max: 'xhigh' };

/** A thinking budget -> the nearest gateway level (whose budgets are 2K, 8K and 24K tokens). */
function effortOfBudget(budget: number): ReasoningEffort {
  if (budget < 4_096) return 'low';
  if (budget < 16_384) return 'medium';
  return 'xhigh';
}

function tools(value: unknown): ToolDefinition[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) invalid('tools must be an array');
  return value.map((tool, index) => {
    if (!isObject(tool) || typeof tool.name !== 'string' || tool.name === '') invalid(`tools[${index}].name is required`);
    const { name, description, input_schema: schema, cache_control: cacheControl, ...extra } = tool;
    if (schema !== undefined && !isObject(schema)) invalid(`tools[${index}].input_schema must be an object`);
    if (cacheControl !== undefined && cacheControl !== null && !isObject(cacheControl)) invalid(`tools[${index}].cache_control must be an object`);
    const definition: ToolDefinition = { name };
    if (typeof description === 'string') definition.description = description;
    if (schema !== undefined) definition.parameters = schema;
    if (isObject(cacheControl)) definition.providerOptions = { anthropic: { cacheControl } };
    // defer_loading, a built-in tool's type, strict, input_examples...: for an Anthropic model.
    if (Object.keys(extra).length > 0) definition.extra = extra;
    return definition;
  });
}

function toolChoice(value: unknown): { choice?: ToolChoice; parallel?: boolean } {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) invalid('tool_choice must be an object');
  const disable = value.disable_parallel_tool_use;
  if (disable !== undefined && typeof disable !== 'boolean') invalid('tool_choice.disable_parallel_tool_use must be a boolean');
  const parallel = typeof disable === 'boolean' ? { parallel: !disable } : {};
  switch (value.type) {
    case 'auto':
      return { choice: 'auto', ...parallel };
    case 'any':
      return { choice: 'required', ...parallel };
    case 'none':
      return { choice: 'none' };
    case 'tool':
      if (typeof value.name !== 'string' || value.name === '') invalid('tool_choice.name is required when type is tool');
      return { choice: { name: value.name }, ...parallel };
    default:
      return invalid('tool_choice.type must be auto, any, tool or none');
  }
}

function stopSequences(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string')) invalid('stop_sequences must be an array of strings');
  return value.length > 0 ? value : undefined;
}

/**
 * `thinking` and `output_config.effort` -> the gateway's reasoning level. Effort wins over a
 * budget; adaptive thinking takes the alias default; no thinking at all is Anthropic's default,
 * off, and so is `disabled`.
 */
function reasoningEffort(thinking: unknown, effort: unknown): ChatRequest['reasoningEffort'] {
  if (thinking !== undefined && thinking !== null && (!isObject(thinking) || typeof thinking.type !== 'string')) {
    invalid('thinking must be an object with a type');
  }
  let level: ReasoningEffort | undefined;
  if (effort !== undefined && effort !== null) {
    level = typeof effort === 'string' ? EFFORTS[effort] : undefined;
    if (!level) invalid('output_config.effort must be one of low, medium, high, max');
  }
  if (!isObject(thinking)) return level ?? 'none';
  switch (thinking.type) {
    case 'disabled':
      return 'none';
    case 'enabled': {
      const budget = positiveInteger(thinking.budget_tokens, 'thinking.budget_tokens');
      if (budget === undefined) invalid('thinking.budget_tokens is required when thinking is enabled');
      return level ?? effortOfBudget(budget);
    }
    default:
      // adaptive, and kinds added after this was written: the model decides, at the alias level.
      return level;
  }
}

/**
 * output_config without the effort (which became the reasoning level) and the format (which
 * became the response format); the rest goes on as sent.
 */
function outputConfigRest(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) invalid('output_config must be an object');
  const { effort: _effort, format, ...rest } = value;
  if (format !== undefined && !responseFormatOf(value)) rest.format = format;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** Anthropic structured outputs: `output_config.format` of type json_schema; another format passes through as sent. */
function responseFormatOf(outputConfig: unknown): ResponseFormat | undefined {
  const format = isObject(outputConfig) ? outputConfig.format : undefined;
  if (!isObject(format) || format.type !== 'json_schema' || !isObject(format.schema)) return undefined;
  return { type: 'json_schema', name: 'output', schema: format.schema };
}

/** Values of the anthropic-beta header (comma-separated, possibly repeated). */
export function parseBetas(header: string | string[] | undefined): string[] | undefined {
  const values = (Array.isArray(header) ? header : header ? [header] : []).flatMap((value) => value.split(','));
  const betas = values.map((value) => value.trim()).filter(Boolean);
  return betas.length > 0 ? betas : undefined;
}

/** Validate an Anthropic Messages body and translate it to the canonical request. */
export function parseMessagesRequest(body: unknown, options: { betas?: string[] } = {}): ParsedMessagesRequest {
  if (!isObject(body)) invalid('the body must be a JSON object');
  if (typeof body.model !== 'string' || body.model === '') invalid('model is required');
  if (!Array.isArray(body.messages) || body.messages.length === 0) invalid('messages is required and must be a non-empty array');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') invalid('stream must be a boolean');
  const outputConfig = body.output_config;

  const fields: Record<string, unknown> = {};
  for (const key in body) if (!KNOWN_FIELDS.has(key)) fields[key] = body[key];
  const outputRest = outputConfigRest(outputConfig);
  if (outputRest) fields.output_config = outputRest;

  const system = body.system === undefined || body.system === null ? [] : systemMessages(body.system, 'system');
  const request: ChatRequest = { messages: [...system, ...body.messages.flatMap(convertMessage)], passThrough: { format: 'anthropic', fields } };
  const format = responseFormatOf(outputConfig);
  if (format) request.responseFormat = format;
  const maxOutput = positiveInteger(body.max_tokens, 'max_tokens');
  if (maxOutput !== undefined) request.maxOutputTokens = maxOutput;
  const toolList = tools(body.tools);
  if (toolList?.length) request.tools = toolList;
  const { choice, parallel } = toolChoice(body.tool_choice);
  if (choice) request.toolChoice = choice;
  if (parallel !== undefined) request.parallelToolCalls = parallel;
  const temperature = optionalNumber(body.temperature, 'temperature');
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optionalNumber(body.top_p, 'top_p');
  if (topP !== undefined) request.topP = topP;
  const topK = body.top_k;
  if (topK !== undefined && topK !== null && (typeof topK !== 'number' || !Number.isInteger(topK) || topK < 0))
    invalid('top_k must be a non-negative integer');
  const stop = stopSequences(body.stop_sequences);
  if (stop) request.stop = stop;
  const effort = reasoningEffort(body.thinking, isObject(outputConfig) ? outputConfig.effort : undefined);
  if (effort) request.reasoningEffort = effort;
  const anthropic: NonNullable<RequestOptions['anthropic']> = {};
  if (effort !== 'none' && isObject(body.thinking) && body.thinking.type === 'enabled') {
    // Validated above: an Anthropic model gets the client's own budget back.
    anthropic.thinkingBudgetTokens = body.thinking.budget_tokens as number;
  }
  if (options.betas?.length) anthropic.betas = options.betas;
  if (Object.keys(anthropic).length > 0) request.providerOptions = { anthropic };

  return { model: body.model, stream: body.stream === true, routing: { ...parseRouting(body.routing), clampMaxOutput: true }, request };
}
