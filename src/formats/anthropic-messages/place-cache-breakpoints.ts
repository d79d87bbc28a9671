import type { AnthropicCacheControl, AnthropicMessagesBody, AnthropicRequestBlock, AnthropicTextBlock } from './anthropic-wire-types.ts';

/**
 * Cache breakpoints the gateway places itself on a Messages body that carries none: Anthropic
 * caches only the prefixes marked with `cache_control`, and a client in an OpenAI format cannot
 * mark any. https://docs.claude.com/en/docs/build-with-claude/prompt-caching
 *
 * Up to four, Anthropic's limit, in its prefix order (tools, system, messages):
 * - the last tool: the tool definitions, which a tool keeps for a whole session;
 * - the last system block: the instructions, with the tools;
 * - the end of the previous turn's prompt (the message before the last assistant turn): exactly
 *   where the previous request put its last breakpoint, so this one reads that cache however many
 *   blocks the last turn added (Anthropic looks back only 20 blocks from a breakpoint);
 * - the last block of the conversation, which the next turn reads.
 * A breakpoint whose prefix cannot reach the model's minimum cacheable length is left out.
 */

/** Anthropic's limit of breakpoints in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;

const EPHEMERAL: AnthropicCacheControl = { type: 'ephemeral' };

/** Shortest prompt each model family caches, in tokens; shorter prefixes are processed uncached, at no extra cost. */
const MINIMUM_CACHEABLE: ReadonlyArray<readonly [RegExp, number]> = [
  [/opus-4-[5-9]|haiku-4-5/, 4_096],
  [/sonnet-4-6|claude-3(-5)?-haiku|haiku-3/, 2_048],
];
const DEFAULT_MINIMUM_CACHEABLE = 1_024;

/** The minimum cacheable prompt of an Anthropic model, by its upstream name (1,024 tokens unless listed). */
export function minimumCacheableTokens(upstream: string): number {
  return MINIMUM_CACHEABLE.find(([pattern]) => pattern.test(upstream))?.[1] ?? DEFAULT_MINIMUM_CACHEABLE;
}

/** Whether the body marks any breakpoint itself (a block, a tool, the system prompt, or Anthropic's top-level automatic `cache_control`). */
export function hasCacheBreakpoints(body: AnthropicMessagesBody): boolean {
  if (body.cache_control !== undefined) return true;
  if (body.tools?.some((tool) => tool.cache_control !== undefined)) return true;
  if (Array.isArray(body.system) && body.system.some((block) => block.cache_control !== undefined)) return true;
  return body.messages.some((message) => message.content.some(marked));
}

function marked(block: AnthropicRequestBlock): boolean {
  if ('cache_control' in block && block.cache_control !== undefined) return true;
  return block.type === 'tool_result' && Array.isArray(block.content) && block.content.some((inner) => inner.cache_control !== undefined);
}

/** A place a breakpoint can go, with what marks it there. */
interface Place {
  /** Upper bound of the prompt's tokens up to and including this place. */
  prefixBytes: number;
  mark(): void;
}

/** Places the breakpoints on `body` (changed in place); returns how many it placed. */
export function placeCacheBreakpoints(body: AnthropicMessagesBody, minimumTokens: number): number {
  const places: Place[] = [];
  let bytes = 0;
  // Measured only until the minimum is reached: a prompt of megabytes is not serialized here.
  const grow = (measure: () => number) => (bytes < minimumTokens ? (bytes += measure()) : bytes);
  const tools = body.tools;
  if (tools?.length) {
    grow(() => byteLength(JSON.stringify(tools)));
    const last = tools.length - 1;
    places.push({ prefixBytes: bytes, mark: () => (tools[last] = { ...tools[last]!, cache_control: EPHEMERAL }) });
  }
  if (body.system !== undefined && body.system.length > 0) {
    const blocks: AnthropicTextBlock[] = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : body.system;
    grow(() => blocks.reduce((sum, block) => sum + byteLength(block.text), 0));
    places.push({
      prefixBytes: bytes,
      mark: () => (body.system = [...blocks.slice(0, -1), { ...blocks.at(-1)!, cache_control: EPHEMERAL }]),
    });
  }
  const ends = messageEnds(body);
  const previous = previousPromptEnd(body);
  body.messages.forEach((message, index) => {
    grow(() => byteLength(JSON.stringify(message.content)));
    const at = ends[index];
    if (at === undefined || (index !== previous && index !== body.messages.length - 1)) return;
    places.push({ prefixBytes: bytes, mark: () => (message.content[at] = withBreakpoint(message.content[at]!)) });
  });
  // One token is at least one byte: a prefix of fewer bytes than the minimum can never be cached.
  const kept = places.filter((place) => place.prefixBytes >= minimumTokens).slice(-MAX_CACHE_BREAKPOINTS);
  for (const place of kept) place.mark();
  return kept.length;
}

/** The message that ended the previous turn's prompt: the one before the last assistant turn, or -1. */
function previousPromptEnd(body: AnthropicMessagesBody): number {
  for (let index = body.messages.length - 1; index > 0; index--) if (body.messages[index]!.role === 'assistant') return index - 1;
  return -1;
}

/** Per message, its last block that may carry a breakpoint (thinking blocks and empty text cannot). */
function messageEnds(body: AnthropicMessagesBody): Array<number | undefined> {
  return body.messages.map((message) => {
    for (let index = message.content.length - 1; index >= 0; index--) {
      const block = message.content[index]!;
      if (block.type === 'thinking' || block.type === 'redacted_thinking') continue;
      if (block.type === 'text' && block.text.trim() === '') continue;
      return index;
    }
    return undefined;
  });
}

function withBreakpoint(block: AnthropicRequestBlock): AnthropicRequestBlock {
  return { ...block, cache_control: EPHEMERAL } as AnthropicRequestBlock;
}

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');
