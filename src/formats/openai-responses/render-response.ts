import type { ToolCall } from '../../canonical/chat-request.ts';
import type { ChatResult, FinishReason, Usage } from '../../canonical/chat-result.ts';
import type { ParsedResponsesRequest } from './parse-responses-request.ts';
import { compactionItem } from './response-compaction.ts';
import type { ToolOrigins } from './responses-tools.ts';

/**
 * Canonical answer -> Responses API `response` object and its output items.
 * https://platform.openai.com/docs/api-reference/responses/object
 */

export interface ResponseContext {
  /** resp_<suffix of the request id>. */
  id: string;
  created: number;
  /** Concrete id of the model that answered. */
  model: string;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';
type ItemStatus = 'in_progress' | 'completed';
export type ItemPrefix = 'msg' | 'rs' | 'fc' | 'ctc' | 'cmp';

/** Responses usage from canonical usage (input tokens include cached ones, output tokens reasoning). */
export function renderResponsesUsage(usage: Usage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** Output item ids: the response's suffix and the item's position keep them unique and stable. */
export function itemId(responseId: string, prefix: ItemPrefix, outputIndex: number): string {
  return `${prefix}_${responseId.slice('resp_'.length)}_${outputIndex}`;
}

export function outputText(text: string) {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

export function messageItem(id: string, text: string | null, status: ItemStatus = 'completed') {
  return { id, type: 'message', status, content: text === null ? [] : [outputText(text)], role: 'assistant' };
}

export function summaryText(text: string) {
  return { type: 'summary_text', text };
}

export function reasoningItem(id: string, text: string | null) {
  return { id, type: 'reasoning', summary: text === null ? [] : [summaryText(text)] };
}

/** The free-form input of a custom tool call, from the `{input}` arguments it was given as a function. */
export function customToolInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { input?: unknown }).input === 'string') {
      return (parsed as { input: string }).input;
    }
  } catch {
    // A cut-short call (finish length): pass on what the model wrote.
  }
  return args;
}

export function isCustomTool(name: string, origins: ToolOrigins): boolean {
  return origins.get(name)?.type === 'custom';
}

/** A function_call or custom_tool_call item, under the name and namespace the client gave the tool. */
export function toolCallItem(id: string, call: ToolCall, origins: ToolOrigins, status: ItemStatus = 'completed') {
  const origin = origins.get(call.name);
  const name = origin?.name ?? call.name;
  const namespace = origin?.namespace ? { namespace: origin.namespace } : {};
  if (origin?.type === 'custom') {
    const input = status === 'completed' ? customToolInput(call.arguments) : '';
    return { id, type: 'custom_tool_call', status, call_id: call.id, name, ...namespace, input };
  }
  return { id, type: 'function_call', status, arguments: call.arguments, call_id: call.id, name, ...namespace };
}

export function toolCallPrefix(name: string, origins: ToolOrigins): ItemPrefix {
  return isCustomTool(name, origins) ? 'ctc' : 'fc';
}

/** Why an answer is incomplete, or null when it is complete. */
export function incompleteReason(finishReason: FinishReason): 'max_output_tokens' | 'content_filter' | null {
  switch (finishReason) {
    case 'length':
      return 'max_output_tokens';
    case 'content_filter':
      return 'content_filter';
    case 'stop':
    case 'tool_calls':
      return null;
  }
}

export interface ResponseState {
  status: ResponseStatus;
  output: unknown[];
  usage: Usage | null;
  incompleteReason?: string | null;
  error?: Record<string, unknown> | null;
}

/** The `response` object, in the field order OpenAI sends. */
export function responseObject(context: ResponseContext, parsed: Pick<ParsedResponsesRequest, 'echo'>, state: ResponseState) {
  const { echo } = parsed;
  return {
    id: context.id,
    object: 'response',
    created_at: context.created,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    model: context.model,
    output: state.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: null,
    reasoning: echo.reasoning,
    store: false,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: echo.truncation,
    usage: state.usage ? renderResponsesUsage(state.usage) : null,
    metadata: echo.metadata,
    ...(echo.user !== undefined ? { user: echo.user } : {}),
    ...(echo.prompt_cache_key !== undefined ? { prompt_cache_key: echo.prompt_cache_key } : {}),
  };
}

/** A non-streaming answer: reasoning (when summaries were asked), the message, then the tool calls; a compaction's one item. */
export function renderResponse(options: { context: ResponseContext; result: ChatResult; usage: Usage; parsed: ParsedResponsesRequest }) {
  const { context, result, parsed } = options;
  const output = parsed.compaction ? [compactionItem(itemId(context.id, 'cmp', 0), result.content)] : outputItems(context, result, parsed);
  const reason = incompleteReason(result.finishReason);
  return responseObject(context, parsed, { status: reason ? 'incomplete' : 'completed', output, usage: options.usage, incompleteReason: reason });
}

function outputItems(context: ResponseContext, result: ChatResult, parsed: ParsedResponsesRequest): unknown[] {
  const output: unknown[] = [];
  if (parsed.reasoningSummary && result.reasoning) output.push(reasoningItem(itemId(context.id, 'rs', output.length), result.reasoning));
  if (result.content !== '' || result.toolCalls.length === 0) output.push(messageItem(itemId(context.id, 'msg', output.length), result.content));
  for (const call of result.toolCalls) {
    output.push(toolCallItem(itemId(context.id, toolCallPrefix(call.name, parsed.toolOrigins), output.length), call, parsed.toolOrigins));
  }
  return output;
}
