import { createHash } from 'node:crypto';
import { anthropicTextTokens } from './count-prompt-tokens.ts';

/**
 * Anthropic's prompt cache as its documentation describes it, for the fake provider to report
 * `cache_creation_input_tokens` and `cache_read_input_tokens` from the breakpoints it receives
 * (https://docs.claude.com/en/docs/build-with-claude/prompt-caching):
 * - the prompt is the blocks of tools, then system, then messages, in that order; a breakpoint
 *   (`cache_control` on a block, or the request's top-level `cache_control` on its last block)
 *   caches the prefix up to and including its block, when that prefix is at least the model's
 *   minimum cacheable length;
 * - a request reads the longest cached prefix ending at one of its breakpoints or up to 20
 *   blocks before one; everything from there to its last cacheable breakpoint is written;
 * - the prefix is keyed by the model and the content, `cache_control` itself left out.
 * Entries never expire here (the 5-minute lifetime is longer than any test).
 */

const LOOKBACK_BLOCKS = 20;
/** Anthropic's documented tool-use system prompt, counted with the first tool (count-prompt-tokens.ts). */
const TOOL_USE_PROMPT = 346;

const MINIMUM_CACHEABLE: ReadonlyArray<readonly [RegExp, number]> = [
  [/opus-4-[5-9]|haiku-4-5/, 4_096],
  [/sonnet-4-6|claude-3(-5)?-haiku|haiku-3/, 2_048],
];

/** The model's minimum cacheable prompt (1,024 tokens unless listed). */
export function minimumCacheable(model: string): number {
  return MINIMUM_CACHEABLE.find(([pattern]) => pattern.test(model))?.[1] ?? 1_024;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const arrayOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** A block without its cache_control (nor its inner blocks'), as the cache keys it. */
export function withoutCacheControl(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCacheControl);
  if (!isObject(value)) return value;
  const { cache_control: _ignored, ...rest } = value;
  return Object.fromEntries(Object.entries(rest).map(([key, inner]) => [key, key === 'content' ? withoutCacheControl(inner) : inner]));
}

interface PromptBlock {
  /** Hash of the model and every block up to and including this one. */
  prefix: string;
  /** Tokens up to and including this block. */
  tokens: number;
  breakpoint: boolean;
}

function blocksOf(body: Json): PromptBlock[] {
  const blocks: PromptBlock[] = [];
  let hash = createHash('sha256').update(String(body.model)).digest('hex');
  let tokens = 0;
  const add = (content: unknown, count: number, breakpoint: boolean) => {
    hash = createHash('sha256')
      .update(hash)
      .update(JSON.stringify(withoutCacheControl(content)))
      .digest('hex');
    tokens += count;
    blocks.push({ prefix: hash, tokens, breakpoint });
  };
  arrayOf(body.tools).forEach((tool, index) => {
    add(
      tool,
      anthropicTextTokens(JSON.stringify(withoutCacheControl(tool))) + (index === 0 ? TOOL_USE_PROMPT : 0),
      isObject(tool) && tool.cache_control !== undefined,
    );
  });
  if (typeof body.system === 'string') add(body.system, anthropicTextTokens(body.system), false);
  for (const block of arrayOf(body.system)) {
    if (isObject(block)) add(block, anthropicTextTokens(String(block.text ?? '')), block.cache_control !== undefined);
  }
  for (const message of arrayOf(body.messages)) {
    if (!isObject(message)) continue;
    if (typeof message.content === 'string') add({ role: message.role, text: message.content }, anthropicTextTokens(message.content), false);
    for (const block of arrayOf(message.content)) {
      if (!isObject(block)) continue;
      const inner = arrayOf(block.content).some((part) => isObject(part) && part.cache_control !== undefined);
      add({ role: message.role, block: withoutCacheControl(block) }, blockTokens(block), block.cache_control !== undefined || inner);
    }
  }
  if (body.cache_control !== undefined && blocks.length > 0) blocks.at(-1)!.breakpoint = true;
  return blocks;
}

function blockTokens(block: Json): number {
  switch (block.type) {
    case 'text':
      return anthropicTextTokens(String(block.text ?? ''));
    case 'image':
      return Math.ceil((1092 * 1092) / 750);
    case 'tool_use':
      return anthropicTextTokens(String(block.name ?? '')) + anthropicTextTokens(JSON.stringify(block.input ?? {}));
    case 'tool_result':
      if (typeof block.content === 'string') return anthropicTextTokens(block.content);
      return arrayOf(block.content).reduce<number>((sum, inner) => sum + (isObject(inner) ? blockTokens(inner) : 0), 0);
    default:
      return 0;
  }
}

/** The prompt cache of one organization: what earlier requests wrote. */
export class AnthropicPromptCache {
  private readonly written = new Set<string>();

  /** What `body` reads from the cache and writes to it, in tokens; remembers what it wrote. */
  account(body: Json): { cached: number; cacheWrite: number } {
    const blocks = blocksOf(body);
    const minimum = minimumCacheable(String(body.model));
    let hit = -1;
    blocks.forEach((block, index) => {
      if (!block.breakpoint) return;
      for (let back = index; back >= Math.max(0, index - LOOKBACK_BLOCKS); back--) {
        if (this.written.has(blocks[back]!.prefix)) {
          hit = Math.max(hit, back);
          break;
        }
      }
    });
    const cached = hit >= 0 ? blocks[hit]!.tokens : 0;
    let writtenUpTo = cached;
    for (const block of blocks) {
      if (!block.breakpoint || block.tokens < minimum) continue;
      this.written.add(block.prefix);
      writtenUpTo = Math.max(writtenUpTo, block.tokens);
    }
    return { cached, cacheWrite: writtenUpTo - cached };
  }

  clear(): void {
    this.written.clear();
  }
}
