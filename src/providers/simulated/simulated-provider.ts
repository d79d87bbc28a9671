import { setTimeout as sleep } from 'node:timers/promises';
import type { ProviderConfig, SimulatedScriptEntry } from '../../config/schema.ts';
import { toolResultText, type ChatRequest } from '../../canonical/chat-request.ts';
import type { ChatResult, FinishReason, Usage } from '../../canonical/chat-result.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import { PromptMeasure } from '../../tokens/token-estimate.ts';
import { countTextTokens } from '../../tokens/text-token-count.ts';
import type { ProviderAdapter, ProviderCall } from '../provider.ts';
import { ProviderError } from '../provider-error.ts';

const REASONING_WORDS = { low: 12, medium: 24, xhigh: 48 } as const;
/** Emit at most this often, so a fast simulated model does not cost a timer per token. */
const TICK_MS = 20;

interface Plan {
  reasoning: string[];
  words: string[];
  toolCall?: { name: string; arguments: string };
  fail?: SimulatedScriptEntry['fail'];
  failAfterChunks?: number;
  finishReason: FinishReason;
}

function userText(message: ChatRequest['messages'][number]): string {
  return message.role === 'user' ? message.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ') : '';
}

/** The script entry for a call: `match` in the last user message, or in the first one for a scripted conversation. */
function findEntry(script: SimulatedScriptEntry[], request: ChatRequest, prompt: string): SimulatedScriptEntry | undefined {
  const firstUser = request.messages.find((message) => message.role === 'user');
  const first = firstUser ? userText(firstUser).toLowerCase() : '';
  return script.find((candidate) => {
    if (!candidate.match) return true;
    const needle = candidate.match.toLowerCase();
    return candidate.replies ? first.includes(needle) : prompt.toLowerCase().includes(needle);
  });
}

function scriptedText(entry: SimulatedScriptEntry | undefined, request: ChatRequest): string | undefined {
  if (!entry?.replies) return entry?.reply;
  const turn = request.messages.filter((message) => message.role === 'assistant').length;
  return entry.replies[Math.min(turn, entry.replies.length - 1)];
}

function lastUserText(request: ChatRequest): string {
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index]!;
    if (message.role === 'user') return userText(message);
    if (message.role === 'tool') return `tool result: ${toolResultText(message.content)}`;
  }
  return '';
}

function words(text: string): string[] {
  return text.split(/(?<=\s)/).filter((word) => word !== '');
}

function planReply(script: SimulatedScriptEntry[], call: ProviderCall): Plan {
  const prompt = lastUserText(call.request);
  const entry = findEntry(script, call.request, prompt);
  const lastIsToolResult = call.request.messages.at(-1)?.role === 'tool';
  const reasoning = call.reasoningEffort
    ? words(`Thinking about "${prompt.slice(0, 40)}" `.concat('step '.repeat(REASONING_WORDS[call.reasoningEffort])))
    : [];
  const toolCall =
    entry?.tool_call && !lastIsToolResult && call.request.tools?.some((tool) => tool.name === entry.tool_call!.name)
      ? { name: entry.tool_call.name, arguments: JSON.stringify(entry.tool_call.arguments) }
      : undefined;
  const text = toolCall
    ? ''
    : (scriptedText(entry, call.request) ??
      `This is ${call.model.id}, a simulated model of the gateway. You said: "${prompt.slice(0, 120)}". ` +
        'Configure a real provider to get real answers.');
  let reply = words(text);
  let finishReason: FinishReason = toolCall ? 'tool_calls' : 'stop';
  const budget = call.maxOutputTokens - reasoning.length;
  if (reply.length > budget) {
    reply = reply.slice(0, Math.max(0, budget));
    finishReason = 'length';
  }
  return { reasoning, words: reply, toolCall, fail: entry?.fail, failAfterChunks: entry?.fail_after_chunks, finishReason };
}

async function usageOf(call: ProviderCall, plan: Plan): Promise<Usage> {
  const reasoningTokens = plan.reasoning.length;
  const textTokens = plan.words.length + (plan.toolCall ? (await countTextTokens(plan.toolCall.arguments)) + 4 : 0);
  return {
    // A provider counts the prompt it is sent: its own measure, not the gateway's.
    inputTokens: await new PromptMeasure(call.request).fairCount(call.model),
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: reasoningTokens + textTokens,
    reasoningTokens,
  };
}

function failure(kind: NonNullable<Plan['fail']>): ProviderError {
  return new ProviderError(kind, `simulated ${kind.replace('_', ' ')}`);
}

async function wait(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new ProviderError('cancelled', 'the request was cancelled');
  }
}

/** A built-in model for the demo and local development: latency, pacing, scripted replies and faults. */
export function createSimulatedProvider(config: ProviderConfig): ProviderAdapter {
  const { latencyMs, tokensPerSecond, script } = config.simulated;
  const tokensPerTick = Math.max(1, Math.round((tokensPerSecond * TICK_MS) / 1000));
  const tickMs = (tokensPerTick * 1000) / tokensPerSecond;

  async function* stream(call: ProviderCall): AsyncGenerator<StreamPart> {
    const plan = planReply(script, call);
    await wait(latencyMs, call.signal);
    if (plan.fail && plan.failAfterChunks === undefined) throw failure(plan.fail);
    let sent = 0;
    for (let index = 0; index < plan.reasoning.length; index += tokensPerTick) {
      yield { type: 'reasoning-delta', text: plan.reasoning.slice(index, index + tokensPerTick).join('') };
      await wait(tickMs, call.signal);
    }
    for (let index = 0; index < plan.words.length; index += tokensPerTick) {
      if (plan.fail && sent === plan.failAfterChunks) throw failure(plan.fail);
      yield { type: 'text-delta', text: plan.words.slice(index, index + tokensPerTick).join('') };
      sent++;
      await wait(tickMs, call.signal);
    }
    // A reply shorter than fail_after_chunks still fails, before it could finish.
    if (plan.fail) throw failure(plan.fail);
    if (plan.toolCall) {
      yield { type: 'tool-call-start', index: 0, id: `call_sim_${Date.now().toString(36)}`, name: plan.toolCall.name };
      yield { type: 'tool-call-delta', index: 0, argumentsDelta: plan.toolCall.arguments };
    }
    yield { type: 'finish', finishReason: plan.finishReason, usage: await usageOf(call, plan) };
  }

  async function generate(call: ProviderCall): Promise<ChatResult> {
    const plan = planReply(script, call);
    if (plan.fail) {
      await wait(latencyMs, call.signal);
      throw failure(plan.fail);
    }
    const usage = await usageOf(call, plan);
    await wait(latencyMs + (usage.outputTokens * 1000) / tokensPerSecond, call.signal);
    return {
      content: plan.words.join(''),
      ...(plan.reasoning.length ? { reasoning: plan.reasoning.join('') } : {}),
      toolCalls: plan.toolCall ? [{ id: `call_sim_${Date.now().toString(36)}`, ...plan.toolCall }] : [],
      finishReason: plan.finishReason,
      usage,
    };
  }

  return { generate, stream, close: async () => {} };
}
