import type { Encoding } from './text-token-count.ts';

/**
 * How OpenAI's chat format counts a prompt, after OpenAI's cookbook "How to count tokens with
 * tiktoken": every message is 3 tokens plus its role and content (and its name, plus 1), the
 * answer is primed with 3; a function tool is a fixed frame plus `name:description` and a
 * `name:type:description` line per parameter, an enum's values 3 tokens each beyond their text.
 * The cookbook checks these against the API's own counts (its figures are in
 * openai-chat-count.test.ts). Texts are returned to be counted, the framing tokens as a number.
 */

/** The tokenizer of an OpenAI model, by its name: o200k_base for GPT-4o and later, cl100k_base for GPT-4 and GPT-3.5; undefined for others. */
export function openAIEncodingFor(upstream: string): Encoding | undefined {
  const name = upstream.slice(upstream.lastIndexOf('/') + 1).toLowerCase();
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o[134](-|$)|codex-)/.test(name)) return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5)/.test(name)) return 'cl100k_base';
  return undefined;
}

/** A message as the chat format counts it. */
export interface CountedMessage {
  role: string;
  /** The text parts, each counted on its own. */
  content: string[];
  name?: string;
  /** Images, counted by the caller. */
  images?: number;
}

/** A function tool as the chat format counts it. */
export interface CountedTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

const PER_MESSAGE = 3;
const PER_NAME = 1;
const REPLY_PRIMING = 3;

/** The cookbook's tool framing: `functionStart` is 7 for o200k models, 10 for cl100k ones. */
const TOOL_FRAMING: Record<
  Encoding,
  { functionStart: number; properties: number; property: number; enumStart: number; enumItem: number; end: number }
> = {
  o200k_base: { functionStart: 7, properties: 3, property: 3, enumStart: -3, enumItem: 3, end: 12 },
  cl100k_base: { functionStart: 10, properties: 3, property: 3, enumStart: -3, enumItem: 3, end: 12 },
};

export interface ChatPieces {
  texts: string[];
  framing: number;
}

const withoutFinalPeriod = (text: string) => (text.endsWith('.') ? text.slice(0, -1) : text);

/** The texts to count and the framing tokens of a chat prompt of `messages` and `tools`, for a model of `encoding`. */
export function openAIChatPieces(messages: readonly CountedMessage[], tools: readonly CountedTool[], encoding: Encoding): ChatPieces {
  const texts: string[] = [];
  let framing = REPLY_PRIMING;
  for (const message of messages) {
    framing += PER_MESSAGE;
    texts.push(message.role, ...message.content);
    if (message.name !== undefined) {
      texts.push(message.name);
      framing += PER_NAME;
    }
  }
  if (tools.length === 0) return { texts, framing };
  const frame = TOOL_FRAMING[encoding];
  for (const tool of tools) {
    framing += frame.functionStart;
    texts.push(`${tool.name}:${withoutFinalPeriod(tool.description ?? '')}`);
    const properties = (tool.parameters?.properties ?? {}) as Record<string, Record<string, unknown>>;
    const names = Object.keys(properties);
    if (names.length === 0) continue;
    framing += frame.properties;
    for (const name of names) {
      const property = properties[name] ?? {};
      framing += frame.property;
      if (Array.isArray(property.enum)) {
        framing += frame.enumStart;
        for (const item of property.enum) {
          framing += frame.enumItem;
          texts.push(String(item));
        }
      }
      const type = Array.isArray(property.type) ? property.type.join(',') : String(property.type ?? '');
      texts.push(`${name}:${type}:${withoutFinalPeriod(typeof property.description === 'string' ? property.description : '')}`);
      // Nested schemas are past the cookbook's recipe: their JSON is counted, so they are not left out.
      for (const nested of ['properties', 'items', 'anyOf', 'oneOf'] as const) {
        if (property[nested] !== undefined) texts.push(JSON.stringify(property[nested]));
      }
    }
  }
  framing += frame.end;
  return { texts, framing };
}
