import type { ChatRequest, ResponseFormat } from '../../canonical/chat-request.ts';
import { parseResponseFormat } from '../openai-chat/parse-chat-request.ts';
import { parseRouting } from '../parse-routing.ts';
import { translateInput } from './parse-responses-input.ts';
import { refuseStatefulFields } from './refuse-stateful-fields.ts';
import { responseEcho } from './responses-echo.ts';
import { translateToolChoice, translateTools, type ToolOrigins } from './responses-tools.ts';
import { invalid, isAbsent, isObject, optionalBoolean, optionalNumber, optionalString } from '../read-fields.ts';

/**
 * POST /v1/responses body -> canonical request, for any candidate model.
 * https://platform.openai.com/docs/api-reference/responses/create
 *
 * Stateless: nothing is stored, so `store: true` is accepted and ignored (the response says
 * `store: false`), while what needs a stored object (`previous_response_id`, `conversation`,
 * `prompt`, `background`) is refused with invalid_request. Responses-only fields never reach
 * the provider; the few with a chat-completions twin are translated (`text.format` ->
 * `response_format`, `user`, `safety_identifier`, `prompt_cache_key`).
 */
export interface ParsedResponsesRequest {
  model: string;
  stream: boolean;
  routing: { fallback: boolean; allowedModels?: string[] };
  request: ChatRequest;
  /** How to render the model's tool calls (function, custom, namespace). */
  toolOrigins: ToolOrigins;
  /** The client asked for reasoning summaries (`reasoning.summary`). */
  reasoningSummary: boolean;
  /** Request fields the response object repeats, in their response form. */
  echo: Record<string, unknown>;
}

type Effort = NonNullable<ChatRequest['reasoningEffort']>;

/** Responses efforts -> gateway levels; minimal has no level of its own, low is the closest. */
const EFFORTS: Record<string, Effort> = {
  none: 'none',
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'xhigh',
  xhigh: 'xhigh',
};

function reasoningOf(body: Record<string, unknown>): { effort?: Effort; sentEffort: string | null; summary: string | null } {
  const reasoning = body.reasoning;
  if (isAbsent(reasoning)) return { sentEffort: null, summary: null };
  if (!isObject(reasoning)) invalid('reasoning must be an object');
  const sent = reasoning.effort;
  let effort: Effort | undefined;
  if (!isAbsent(sent)) {
    effort = typeof sent === 'string' ? EFFORTS[sent] : undefined;
    if (!effort) invalid('reasoning.effort must be one of none, minimal, low, medium, high, xhigh');
  }
  // generate_summary is the deprecated name of summary.
  const summary = reasoning.summary ?? reasoning.generate_summary;
  return { effort, sentEffort: effort ? (sent as string) : null, summary: typeof summary === 'string' ? summary : null };
}

/** `text.format` is the Responses API's response_format: the same fields, one level up. */
function responseFormat(text: unknown): ResponseFormat | undefined {
  if (isAbsent(text)) return undefined;
  if (!isObject(text)) invalid('text must be an object');
  const format = text.format;
  if (isAbsent(format)) return undefined;
  if (!isObject(format)) invalid('text.format must be an object');
  if (format.type === 'json_schema') {
    if (typeof format.name !== 'string' || !isObject(format.schema)) invalid('text.format needs name and schema for json_schema');
    const { type: _type, ...spec } = format;
    return parseResponseFormat({ type: 'json_schema', json_schema: spec }, 'text.format');
  }
  return parseResponseFormat(format, 'text.format');
}

/** Validate a Responses API body and translate it to the canonical request. */
export function parseResponsesRequest(body: unknown): ParsedResponsesRequest {
  if (!isObject(body)) invalid('the body must be a JSON object');
  if (typeof body.model !== 'string' || body.model === '') invalid('model is required');
  if (isAbsent(body.input) || (Array.isArray(body.input) && body.input.length === 0)) invalid('input is required and must not be empty');
  refuseStatefulFields(body);

  const instructions = optionalString(body.instructions, 'instructions');
  const messages = translateInput(body.input, instructions);
  if (!messages.some((message) => message.role !== 'system' && message.role !== 'developer')) {
    invalid('input has no message or tool output for the model to answer');
  }
  const { tools, origins } = translateTools(body.tools);
  const reasoning = reasoningOf(body);

  // The Responses fields that chat completions have too, under the same names and meaning.
  const fields: Record<string, unknown> = {};
  for (const field of ['user', 'safety_identifier', 'prompt_cache_key']) {
    const value = optionalString(body[field], field);
    if (value !== undefined) fields[field] = value;
  }
  const request: ChatRequest = { messages, passThrough: { format: 'openai', fields } };
  const maxOutput = body.max_output_tokens;
  if (!isAbsent(maxOutput)) {
    if (typeof maxOutput !== 'number' || !Number.isInteger(maxOutput) || maxOutput < 1) invalid('max_output_tokens must be a positive integer');
    request.maxOutputTokens = maxOutput;
  }
  const choice = translateToolChoice(body.tool_choice);
  const parallel = optionalBoolean(body.parallel_tool_calls, 'parallel_tool_calls');
  // Without tools, a tool_choice would make providers refuse the request.
  if (tools.length) {
    request.tools = tools;
    if (choice) request.toolChoice = choice;
    if (parallel !== undefined) request.parallelToolCalls = parallel;
  }
  const temperature = optionalNumber(body.temperature, 'temperature');
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optionalNumber(body.top_p, 'top_p');
  if (topP !== undefined) request.topP = topP;
  if (reasoning.effort) request.reasoningEffort = reasoning.effort;

  const format = responseFormat(body.text);
  if (format) request.responseFormat = format;

  // store: true is read and ignored: nothing is stored, and the response says store: false.
  optionalBoolean(body.store, 'store');
  return {
    model: body.model,
    stream: optionalBoolean(body.stream, 'stream') ?? false,
    routing: parseRouting(body.routing),
    request,
    toolOrigins: origins,
    reasoningSummary: reasoning.summary !== null,
    echo: responseEcho(body, { instructions, maxOutputTokens: request.maxOutputTokens, parallel, reasoning, temperature, topP }),
  };
}
