import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Token counts the fake upstream reports when a script does not set them, modelled on how the
 * real providers count, so tests can hold the gateway's estimates against them.
 *
 * OpenAI (https://platform.openai.com/docs/guides/vision, the cookbook's "How to count tokens"):
 * o200k_base over the role and text of every message, 3 tokens per message, 3 to prime the
 * answer; function tools by the cookbook's recipe (7 per function plus `name:description`, 3 and
 * `name:type:description` per parameter, enum values, 12 at the end; nested schemas as their
 * JSON); an image at high detail as 85 + 170 per 512 px tile,
 * here always a 1024x1024 image (4 tiles, 765 tokens), 85 at low detail.
 *
 * Anthropic's tokenizer is not public. Stand-ins: cl100k_base x 1.15 over the system prompt,
 * message text, tool_use names and inputs, tool_result content and tool definitions' JSON;
 * 346 tokens for the tool-use system prompt Claude gets when tools are present (Anthropic's
 * documented figure for auto/none tool choice); an image at ceil(width x height / 750) with the
 * largest size that is not resized, 1092x1092 -> 1590 tokens
 * (https://docs.anthropic.com/en/docs/build-with-claude/vision).
 */

// Text that looks like a special token is ordinary text in a prompt.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

const OPENAI_PER_MESSAGE = 3;
const OPENAI_PRIMING = 3;
const OPENAI_HIGH_DETAIL_IMAGE = 85 + 170 * 4;
const OPENAI_LOW_DETAIL_IMAGE = 85;

const CLAUDE_OVER_CL100K = 1.15;
const ANTHROPIC_TOOL_USE_PROMPT = 346;
const ANTHROPIC_IMAGE = Math.ceil((1092 * 1092) / 750);

/** o200k_base tokens of a text: OpenAI's current models. */
export function openAiTextTokens(text: string): number {
  return text === '' ? 0 : countO200k(text, PLAIN_TEXT);
}

/** The stand-in for Claude's tokenizer: cl100k_base x 1.15, rounded up. */
export function anthropicTextTokens(text: string): number {
  return text === '' ? 0 : Math.ceil(countCl100k(text, PLAIN_TEXT) * CLAUDE_OVER_CL100K);
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const arrayOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const stringOf = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Prompt tokens OpenAI would report for a chat-completions body. */
export function countOpenAiPromptTokens(body: Json): number {
  let tokens = OPENAI_PRIMING;
  for (const message of arrayOf(body.messages)) {
    if (!isObject(message)) continue;
    tokens += OPENAI_PER_MESSAGE + openAiTextTokens(stringOf(message.role));
    const content = message.content;
    if (typeof content === 'string') tokens += openAiTextTokens(content);
    for (const part of arrayOf(content)) {
      if (!isObject(part)) continue;
      if (part.type === 'text') tokens += openAiTextTokens(stringOf(part.text));
      if (part.type === 'image_url') {
        const detail = isObject(part.image_url) ? part.image_url.detail : undefined;
        tokens += detail === 'low' ? OPENAI_LOW_DETAIL_IMAGE : OPENAI_HIGH_DETAIL_IMAGE;
      }
    }
    for (const call of arrayOf(message.tool_calls)) {
      const fn = isObject(call) && isObject(call.function) ? call.function : {};
      tokens += openAiTextTokens(stringOf(fn.name)) + openAiTextTokens(stringOf(fn.arguments));
    }
  }
  const tools = arrayOf(body.tools);
  for (const tool of tools) tokens += openAiToolTokens(isObject(tool) && isObject(tool.function) ? tool.function : {});
  if (tools.length > 0) tokens += 12;
  return tokens;
}

const withoutFinalPeriod = (text: string) => (text.endsWith('.') ? text.slice(0, -1) : text);

/** One function tool, by the cookbook's recipe for o200k models. */
function openAiToolTokens(fn: Json): number {
  let tokens = 7 + openAiTextTokens(`${stringOf(fn.name)}:${withoutFinalPeriod(stringOf(fn.description))}`);
  const properties = isObject(fn.parameters) && isObject(fn.parameters.properties) ? fn.parameters.properties : {};
  const names = Object.keys(properties);
  if (names.length > 0) tokens += 3;
  for (const name of names) {
    const property = isObject(properties[name]) ? properties[name] : {};
    tokens += 3;
    if (Array.isArray(property.enum)) tokens += -3 + property.enum.reduce<number>((sum, item) => sum + 3 + openAiTextTokens(String(item)), 0);
    const type = Array.isArray(property.type) ? property.type.join(',') : stringOf(property.type);
    tokens += openAiTextTokens(`${name}:${type}:${withoutFinalPeriod(stringOf(property.description))}`);
    for (const nested of ['properties', 'items', 'anyOf', 'oneOf']) {
      if (property[nested] !== undefined) tokens += openAiTextTokens(JSON.stringify(property[nested]));
    }
  }
  return tokens;
}

/** Prompt tokens (cached and cache-written included) Anthropic would report for a Messages body. */
export function countAnthropicPromptTokens(body: Json): number {
  let tokens = anthropicTextTokens(systemText(body.system));
  for (const message of arrayOf(body.messages)) {
    if (!isObject(message)) continue;
    const content = message.content;
    if (typeof content === 'string') tokens += anthropicTextTokens(content);
    for (const block of arrayOf(content)) tokens += anthropicBlockTokens(block);
  }
  const tools = arrayOf(body.tools);
  if (tools.length > 0) tokens += ANTHROPIC_TOOL_USE_PROMPT;
  // A breakpoint is not prompt: the tool counts as it would without one.
  for (const tool of tools) tokens += anthropicTextTokens(JSON.stringify(isObject(tool) ? { ...tool, cache_control: undefined } : tool));
  return tokens;
}

function anthropicBlockTokens(block: unknown): number {
  if (!isObject(block)) return 0;
  switch (block.type) {
    case 'text':
      return anthropicTextTokens(stringOf(block.text));
    case 'image':
      return ANTHROPIC_IMAGE;
    case 'tool_use':
      return anthropicTextTokens(stringOf(block.name)) + anthropicTextTokens(JSON.stringify(block.input ?? {}));
    case 'tool_result':
      if (typeof block.content === 'string') return anthropicTextTokens(block.content);
      return arrayOf(block.content).reduce<number>((sum, inner) => sum + anthropicBlockTokens(inner), 0);
    default:
      return 0;
  }
}

/** `system` is a string or an array of text blocks. */
function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  return arrayOf(system)
    .map((block) => (isObject(block) ? stringOf(block.text) : ''))
    .join('\n\n');
}
