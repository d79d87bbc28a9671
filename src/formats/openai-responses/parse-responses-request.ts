import type { IncomingHttpHeaders } from 'node:http';
import type { ChatRequest, ResponseFormat } from '../../canonical/chat-request.ts';
import { responseFormatOf } from '../openai-chat/parse-chat-request.ts';
import { codexHeaders } from './codex-headers.ts';
import { parseRouting } from '../parse-routing.ts';
import { invalid, isObject } from '../read-fields.ts';
import { bodyValidator } from '../validate-body.ts';
import { translateInput } from './parse-responses-input.ts';
import { responsesRequestSchema, type ResponsesRequestBody, type ResponsesTool } from './responses-request-schema.ts';
import { responseEcho } from './responses-echo.ts';
import { translateToolChoice, translateTools, type ToolOrigins } from './responses-tools.ts';

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
  /** Codex's remote compaction: the answer is one `compaction` item holding the model's note (response-compaction.ts). */
  compaction: boolean;
}

type Effort = NonNullable<ChatRequest['reasoningEffort']>;

/** The Responses body checker (compiled at start, see body-validators.ts). */
export const readResponsesBody = bodyValidator(responsesRequestSchema);

/** Responses efforts -> gateway levels; minimal has no level of its own, low is the closest. */
const EFFORTS: Record<string, Effort> = {
  none: 'none',
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'xhigh',
  xhigh: 'xhigh',
};

function reasoningOf(body: ResponsesRequestBody): { effort?: Effort; sentEffort: string | null; summary: string | null } {
  const sent = body.reasoning?.effort ?? null;
  // generate_summary is the deprecated name of summary.
  const summary = body.reasoning?.summary ?? body.reasoning?.generate_summary ?? null;
  return { effort: sent ? EFFORTS[sent] : undefined, sentEffort: sent, summary };
}

/** `text.format` is the Responses API's response_format: the same fields, one level up. */
function responseFormat(text: ResponsesRequestBody['text']): ResponseFormat | undefined {
  const format = text?.format;
  if (format?.type !== 'json_schema') return responseFormatOf(format);
  const { type: _type, ...spec } = format;
  return responseFormatOf({ type: 'json_schema', json_schema: spec });
}

/** The Responses fields that chat completions have too, under the same names and meaning. */
const CHAT_TWINS = ['user', 'safety_identifier', 'prompt_cache_key'] as const;

function isEmptyInput(raw: unknown): raw is Record<string, unknown> {
  return isObject(raw) && Array.isArray(raw.input) && raw.input.length === 0;
}

/** The tools of `additional_tools` input items: Codex sends them so for the models its catalog knows. */
function inputTools(input: ResponsesRequestBody['input']): ResponsesTool[] {
  if (typeof input === 'string') return [];
  return input.flatMap((item) => (item.type === 'additional_tools' ? item.tools : []));
}

/**
 * Validate a Responses API body and translate it to the canonical request. A `prewarm` (a
 * `generate: false` frame on a Responses socket) is answered by no model, so it needs no
 * message to answer.
 */
export function parseResponsesRequest(raw: unknown, headers: IncomingHttpHeaders = {}, options: { prewarm?: boolean } = {}): ParsedResponsesRequest {
  // Codex's prewarm for a model its catalog knows has no input at all, which no model could answer.
  const body = readResponsesBody(options.prewarm && isEmptyInput(raw) ? { ...raw, input: '' } : raw);
  const instructions = body.instructions ?? undefined;
  const messages = translateInput(body.input, instructions);
  if (!options.prewarm && !messages.some((message) => message.role !== 'system' && message.role !== 'developer')) {
    invalid('input has no message or tool output for the model to answer');
  }
  const { tools, origins } = translateTools([...(body.tools ?? []), ...inputTools(body.input)]);
  const reasoning = reasoningOf(body);

  const fields: Record<string, unknown> = {};
  for (const field of CHAT_TWINS) if (typeof body[field] === 'string') fields[field] = body[field];
  const request: ChatRequest = { messages, passThrough: { format: 'openai', fields } };
  const forwarded = codexHeaders(headers);
  if (forwarded) request.providerOptions = { openai: { headers: forwarded } };
  if (typeof body.max_output_tokens === 'number') request.maxOutputTokens = body.max_output_tokens;
  const choice = translateToolChoice(body.tool_choice);
  const parallel = body.parallel_tool_calls ?? undefined;
  // Without tools, a tool_choice would make providers refuse the request.
  const compaction = typeof body.input !== 'string' && body.input.at(-1)?.type === 'compaction_trigger';
  if (tools.length) {
    request.tools = tools;
    // The tools stay declared (the calls in the conversation need them) but the note is text.
    if (compaction) request.toolChoice = 'none';
    else if (choice) request.toolChoice = choice;
    if (parallel !== undefined) request.parallelToolCalls = parallel;
  }
  const temperature = body.temperature ?? undefined;
  if (temperature !== undefined) request.temperature = temperature;
  const topP = body.top_p ?? undefined;
  if (topP !== undefined) request.topP = topP;
  if (reasoning.effort) request.reasoningEffort = reasoning.effort;

  const format = responseFormat(body.text);
  if (format) request.responseFormat = format;

  // store: true is read and ignored: nothing is stored, and the response says store: false.
  return {
    model: body.model,
    stream: body.stream ?? false,
    routing: parseRouting(body.routing),
    request,
    toolOrigins: origins,
    reasoningSummary: reasoning.summary !== null,
    compaction,
    echo: responseEcho(body as Record<string, unknown>, {
      instructions,
      maxOutputTokens: request.maxOutputTokens,
      parallel,
      reasoning,
      temperature,
      topP,
    }),
  };
}
