import type { CacheControl, ChatMessage, ContentPart, ReasoningBlock, ToolCall } from '../../canonical/chat-request.ts';
import type { AnthropicImageBlock, AnthropicRequestBlock, AnthropicRequestMessage, AnthropicTextBlock } from './anthropic-wire-types.ts';

/**
 * Canonical messages -> Anthropic `system` and alternating user/assistant turns. Cache
 * breakpoints, signed thinking and tool-result images go back as the client sent them.
 * https://docs.anthropic.com/en/api/messages#body-messages
 */
export function convertToAnthropicMessages(messages: ChatMessage[]): {
  system?: string | AnthropicTextBlock[];
  messages: AnthropicRequestMessage[];
} {
  const systemBlocks: AnthropicTextBlock[] = [];
  const turns: AnthropicRequestMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        // Anthropic has one system prompt and no developer role; both become system text.
        if (message.content.trim() !== '')
          systemBlocks.push(withCacheControl({ type: 'text', text: message.content }, message.providerOptions?.anthropic?.cacheControl));
        break;
      case 'user':
        appendTurn(turns, 'user', message.content.flatMap(convertUserPart));
        break;
      case 'assistant':
        appendTurn(turns, 'assistant', convertAssistant(message));
        break;
      case 'tool':
        // Tool results travel in a user turn; consecutive ones merge into that same turn.
        appendTurn(turns, 'user', [convertToolResult(message)]);
        break;
    }
  }
  if (systemBlocks.length === 0) return { messages: turns };
  // Cache breakpoints need the blocks; without any, one string is the simplest body.
  const cached = systemBlocks.some((block) => block.cache_control !== undefined);
  return { system: cached ? systemBlocks : systemBlocks.map((block) => block.text).join('\n\n'), messages: turns };
}

function withCacheControl<Block extends object>(block: Block, cacheControl: CacheControl | undefined): Block & { cache_control?: CacheControl } {
  return cacheControl === undefined ? block : { ...block, cache_control: cacheControl };
}

/** Anthropic wants strictly alternating roles, so a turn of the same role as the last one merges into it. */
function appendTurn(turns: AnthropicRequestMessage[], role: 'user' | 'assistant', blocks: AnthropicRequestBlock[]): void {
  if (blocks.length === 0) return;
  const last = turns.at(-1);
  if (last?.role !== role) {
    turns.push({ role, content: blocks });
    return;
  }
  last.content.push(...blocks);
  // Tool results must open their user turn, before any text that got merged in with them.
  if (role === 'user') {
    last.content = [...last.content.filter((block) => block.type === 'tool_result'), ...last.content.filter((block) => block.type !== 'tool_result')];
  }
}

function convertUserPart(part: ContentPart): Array<AnthropicTextBlock | AnthropicImageBlock> {
  if (part.type === 'image')
    return [withCacheControl({ type: 'image', source: convertImageSource(part.url) }, part.providerOptions?.anthropic?.cacheControl)];
  // Anthropic rejects text blocks that are empty or only whitespace.
  return part.text.trim() === '' ? [] : [withCacheControl({ type: 'text', text: part.text }, part.providerOptions?.anthropic?.cacheControl)];
}

function convertToolResult(message: Extract<ChatMessage, { role: 'tool' }>): AnthropicRequestBlock {
  const block: Extract<AnthropicRequestBlock, { type: 'tool_result' }> = { type: 'tool_result', tool_use_id: toAnthropicToolId(message.toolCallId) };
  if (typeof message.content === 'string') {
    if (message.content !== '') block.content = message.content;
  } else {
    const content = message.content.flatMap(convertUserPart);
    if (content.length > 0) block.content = content;
  }
  if (message.isError) block.is_error = true;
  return withCacheControl(block, message.providerOptions?.anthropic?.cacheControl);
}

/** Signed thinking first (Anthropic checks the signatures), then text, then tool uses. */
function convertAssistant(message: Extract<ChatMessage, { role: 'assistant' }>): AnthropicRequestBlock[] {
  const answer: AnthropicRequestBlock[] = [];
  if (message.content !== null && message.content.trim() !== '') answer.push({ type: 'text', text: message.content });
  for (const call of message.toolCalls ?? []) answer.push(convertToolCall(call));
  // A breakpoint goes on the last block of the turn; thinking blocks cannot carry one.
  const last = answer.at(-1);
  if (last && message.providerOptions?.anthropic?.cacheControl !== undefined)
    answer[answer.length - 1] = withCacheControl(last, message.providerOptions?.anthropic?.cacheControl) as AnthropicRequestBlock;
  return answer.length === 0 ? [] : [...(message.reasoning ?? []).flatMap(convertReasoning), ...answer];
}

function convertToolCall(call: ToolCall): AnthropicRequestBlock {
  return { type: 'tool_use', id: toAnthropicToolId(call.id), name: call.name, input: parseToolInput(call.arguments) };
}

/** Reasoning without a signature came from another provider; Anthropic would reject it, so it stays behind. */
function convertReasoning(block: ReasoningBlock): AnthropicRequestBlock[] {
  const anthropic = block.providerOptions?.anthropic;
  if (anthropic?.redactedData !== undefined) return [{ type: 'redacted_thinking', data: anthropic.redactedData }];
  return anthropic?.signature ? [{ type: 'thinking', thinking: block.text, signature: anthropic.signature }] : [];
}

/**
 * Anthropic only accepts ids matching ^[a-zA-Z0-9_-]+$, but after a fallback the ids come from
 * another provider (e.g. `functions.get_weather:0`). The mapping is deterministic, so a tool
 * use and its result still pair up.
 */
export function toAnthropicToolId(id: string): string {
  const sanitized = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return sanitized === '' ? '_' : sanitized;
}

/** Anthropic wants the input as an object; arguments a model got wrong become `{}` rather than failing the turn. */
export function parseToolInput(argumentsText: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(argumentsText);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function convertImageSource(url: string) {
  const inline = parseDataUrl(url);
  return inline ? { type: 'base64' as const, media_type: inline.mediaType, data: inline.base64 } : { type: 'url' as const, url };
}

/** `data:<media type>[;base64],<data>` -> media type and base64 data; undefined for anything else. */
function parseDataUrl(url: string): { mediaType: string; base64: string } | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma === -1) return undefined;
  const header = url.slice('data:'.length, comma);
  const data = url.slice(comma + 1);
  const [mediaType = '', ...parameters] = header.split(';');
  if (parameters.includes('base64')) return { mediaType, base64: data };
  return { mediaType, base64: Buffer.from(percentDecode(data), 'latin1').toString('base64') };
}

/** Percent-decoding to bytes (as latin1 characters), which decodeURIComponent cannot do for non-UTF-8 data. */
function percentDecode(text: string): string {
  return text.replace(/%([0-9a-fA-F]{2})/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
