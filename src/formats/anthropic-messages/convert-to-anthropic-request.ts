import type { ChatRequest, ReasoningEffort, ToolChoice, ToolDefinition } from '../../canonical/chat-request.ts';
import type { ModelConfig } from '../../config/schema.ts';
import type { AnthropicMessagesBody, AnthropicRequestMessage, AnthropicTool, AnthropicToolChoice } from './anthropic-wire-types.ts';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.ts';
import { passThroughFor } from '../pass-through.ts';
import { planStructuredOutput } from './structured-output.ts';
import { hasCacheBreakpoints, minimumCacheableTokens, placeCacheBreakpoints } from './place-cache-breakpoints.ts';

export interface AnthropicRequestInput {
  request: ChatRequest;
  model: Pick<ModelConfig, 'upstream'> & { capabilities?: Partial<ModelConfig['capabilities']> };
  reasoningEffort?: ReasoningEffort;
  maxOutputTokens: number;
  /** Told of each client setting dropped in translation. */
  warn?: (message: string) => void;
  /** Place cache breakpoints on a request that marks none (place-cache-breakpoints.ts). */
  automaticCaching?: boolean;
}

/** Thinking budget per effort level, in tokens. */
export const THINKING_BUDGET: Readonly<Record<ReasoningEffort, number>> = { low: 2_048, medium: 8_192, xhigh: 24_576 };

/** Anthropic's smallest accepted budget_tokens. */
export const MIN_THINKING_BUDGET = 1_024;

/**
 * Canonical request -> Messages API body (without `stream`).
 * https://docs.anthropic.com/en/api/messages
 */
export function convertToAnthropicRequest(input: AnthropicRequestInput): AnthropicMessagesBody {
  const { request, maxOutputTokens } = input;
  const warn = input.warn ?? (() => {});
  const { system, messages } = convertToAnthropicMessages(request.messages);
  const structured = planStructuredOutput(request, input.model.capabilities?.structured_output === true, warn);
  let tools = request.tools?.length ? request.tools.map(convertTool) : undefined;
  let toolChoice = tools ? convertToolChoice(request.toolChoice, request.parallelToolCalls) : undefined;
  if (structured.kind === 'tool') {
    tools = [...(tools ?? []), structured.tool];
    toolChoice = structured.choice;
  }
  const budget = thinkingBudget(
    input.reasoningEffort,
    request.providerOptions?.anthropic?.thinkingBudgetTokens,
    maxOutputTokens,
    toolChoice,
    messages,
  );

  // Unknown client fields go first, so they can add to the body but never replace what we set.
  const fields = passThroughFor('anthropic', request.passThrough, warn);
  const body: AnthropicMessagesBody = { ...fields, model: input.model.upstream, max_tokens: maxOutputTokens, messages };
  if (structured.kind === 'output_config') {
    const config = typeof fields.output_config === 'object' && fields.output_config !== null ? fields.output_config : {};
    body.output_config = { ...config, format: structured.format };
  }
  if (system !== undefined) body.system = system;
  if (tools) body.tools = tools;
  if (toolChoice) body.tool_choice = toolChoice;
  if (request.stop?.length) body.stop_sequences = request.stop;
  if (budget !== undefined) {
    body.thinking = { type: 'enabled', budget_tokens: budget };
  } else {
    // Anthropic rejects temperature and top_p (below 0.95) together with thinking, so they only go without it.
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.topP !== undefined) body.top_p = request.topP;
    dropThinkingFromPrefill(messages);
  }
  // A request that marks its own breakpoints is sent as marked (Claude Code marks its system prompt and last turn).
  if (input.automaticCaching && !hasCacheBreakpoints(body)) placeCacheBreakpoints(body, minimumCacheableTokens(input.model.upstream));
  return body;
}

/** Without thinking, Anthropic refuses thinking blocks in an assistant turn that ends the conversation (a prefill). */
function dropThinkingFromPrefill(messages: AnthropicRequestMessage[]): void {
  const last = messages.at(-1);
  if (last?.role !== 'assistant') return;
  const kept = last.content.filter((block) => block.type !== 'thinking' && block.type !== 'redacted_thinking');
  if (kept.length > 0) last.content = kept;
  else messages.pop();
}

function convertTool(tool: ToolDefinition): AnthropicTool {
  // The client's own fields first (defer_loading, a built-in tool's type...); ours win over them.
  const converted: AnthropicTool = { ...tool.extra, name: tool.name };
  if (tool.description !== undefined) converted.description = tool.description;
  // Anthropic's built-in tools (`type: "web_search_20250305"`...) have no input schema; client tools must have one.
  if (tool.parameters !== undefined || !isBuiltInTool(tool)) converted.input_schema = tool.parameters ?? { type: 'object', properties: {} };
  const cacheControl = tool.providerOptions?.anthropic?.cacheControl;
  if (cacheControl !== undefined) converted.cache_control = cacheControl;
  return converted;
}

function isBuiltInTool(tool: ToolDefinition): boolean {
  const type = tool.extra?.type;
  return typeof type === 'string' && type !== 'custom';
}

/** https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#controlling-claudes-output */
function convertToolChoice(choice: ToolChoice | undefined, parallelToolCalls: boolean | undefined): AnthropicToolChoice | undefined {
  const noParallel = parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...noParallel };
  if (typeof choice === 'object') return { type: 'tool', name: choice.name, ...noParallel };
  if (choice === 'auto' || parallelToolCalls === false) return { type: 'auto', ...noParallel };
  return undefined;
}

/**
 * The thinking budget to ask for, or undefined to leave thinking off. Besides the size rules
 * (at least 1024 and below max_tokens), Anthropic refuses thinking with a forced tool choice,
 * and in the middle of a tool loop whose last assistant turn does not open with its signed
 * thinking block (e.g. the turn came from another provider); there the request goes without thinking.
 * https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking
 */
function thinkingBudget(
  effort: ReasoningEffort | undefined,
  askedBudget: number | undefined,
  maxOutputTokens: number,
  toolChoice: AnthropicToolChoice | undefined,
  messages: AnthropicRequestMessage[],
): number | undefined {
  if (effort === undefined) return undefined;
  if (toolChoice?.type === 'any' || toolChoice?.type === 'tool') return undefined;
  if (lastAssistantTurnUsesToolsUnsigned(messages)) return undefined;
  const budget = Math.min(askedBudget ?? THINKING_BUDGET[effort], maxOutputTokens - 1);
  return budget >= MIN_THINKING_BUDGET ? budget : undefined;
}

function lastAssistantTurnUsesToolsUnsigned(messages: AnthropicRequestMessage[]): boolean {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== 'assistant') continue;
    const first = message.content[0]?.type;
    return message.content.some((block) => block.type === 'tool_use') && first !== 'thinking' && first !== 'redacted_thinking';
  }
  return false;
}
