/**
 * What the price catalog does not carry: the most output tokens a model writes in one answer and
 * whether it takes tools, images and a reasoning effort, per model family as its vendor documents
 * them. Matched on the model's name (the part after the last `/`, so OpenRouter's
 * `anthropic/claude-sonnet-4.5` finds Claude's), first prefix that fits; dots count as dashes.
 * A model of no family here gets the defaults below, which the config overrides per model.
 */
export interface ModelTraits {
  maxOutputTokens: number;
  tools: boolean;
  vision: boolean;
  reasoning: boolean;
}

/** [name prefix, max output tokens, capabilities: t tools, v vision, r reasoning]. */
const families: ReadonlyArray<readonly [string, number, string]> = [
  ['claude-opus-4-1', 32_000, 'tvr'],
  ['claude-opus-4-0', 32_000, 'tvr'],
  ['claude-opus-4-2025', 32_000, 'tvr'],
  ['claude-opus-4', 64_000, 'tvr'],
  ['claude-sonnet-4', 64_000, 'tvr'],
  ['claude-haiku-4', 64_000, 'tvr'],
  ['claude-3-7-sonnet', 64_000, 'tvr'],
  ['claude-3-5-sonnet', 8_192, 'tv'],
  ['claude-3-5-haiku', 8_192, 'tv'],
  ['claude-3', 4_096, 'tv'],
  ['claude-', 32_000, 'tvr'],
  ['gpt-5-chat', 16_384, 'tv'],
  ['gpt-5', 128_000, 'tvr'],
  ['gpt-4-1', 32_768, 'tv'],
  ['gpt-4o', 16_384, 'tv'],
  ['chatgpt-4o', 16_384, 'tv'],
  ['gpt-4-turbo', 4_096, 'tv'],
  ['gpt-4', 8_192, 't'],
  ['gpt-3-5-turbo', 4_096, 't'],
  ['gpt-oss', 32_768, 'tr'],
  ['o1-mini', 65_536, 'r'],
  ['o1', 100_000, 'tvr'],
  ['o3-mini', 100_000, 'tr'],
  ['o3', 100_000, 'tvr'],
  ['o4-mini', 100_000, 'tvr'],
  ['codex-mini', 100_000, 'tvr'],
  ['gemini-2-0', 8_192, 'tv'],
  ['gemini-1-5', 8_192, 'tv'],
  ['gemini-', 65_536, 'tvr'],
  ['deepseek-chat', 8_192, 't'],
  ['deepseek-reasoner', 64_000, 'tr'],
  ['deepseek-r1', 32_768, 'r'],
  ['deepseek-v3', 8_192, 't'],
  ['grok-', 32_768, 'tvr'],
  ['llama-3-3', 32_768, 't'],
  ['llama-', 8_192, 't'],
  ['kimi-k2', 16_384, 't'],
  ['qwen', 8_192, 't'],
  ['mistral-', 8_192, 't'],
  ['codestral', 8_192, 't'],
];

/** Traits of a model no family covers; every one shown as a default by `gateway models`. */
export const DEFAULT_TRAITS: ModelTraits = { maxOutputTokens: 8_192, tools: false, vision: false, reasoning: false };

/** The family traits of `upstream`, or undefined when no family covers it. */
export function traitsOf(upstream: string): ModelTraits | undefined {
  const name = upstream
    .slice(upstream.lastIndexOf('/') + 1)
    .toLowerCase()
    .replace(/\./g, '-');
  const family = families.find(([prefix]) => name.startsWith(prefix));
  if (!family) return undefined;
  const [, maxOutputTokens, capabilities] = family;
  return { maxOutputTokens, tools: capabilities.includes('t'), vision: capabilities.includes('v'), reasoning: capabilities.includes('r') };
}
