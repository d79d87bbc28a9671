import type { ChatMessage, ContentPart, ToolCall } from '../../protocol/canonical/chat-request.ts';
import type { AnthropicRequestBlock, AnthropicRequestMessage } from './anthropic-api-types.ts';

/**
 * Canonical messages -> Anthropic `system` and alternating user/assistant turns.
 * https://docs.anthropic.com/en/api/messages#body-messages
 */
export function convertToAnthropicMessages(messages: ChatMessage[]): {
  system?: string;
  messages: AnthropicRequestMessage[];
} {
  const systemTexts: string[] = [];
  const turns: AnthropicRequestMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        // Anthropic has one system prompt and no developer role; both become system text.
        if (message.content.trim() !== '') systemTexts.push(message.content);
        break;
      case 'user':
        appendTurn(turns, 'user', message.content.flatMap(convertUserPart));
        break;
      case 'assistant':
        appendTurn(turns, 'assistant', convertAssistant(message.content, message.toolCalls ?? []));
        break;
      case 'tool':
        // Tool results travel in a user turn; consecutive ones merge into that same turn.
        appendTurn(turns, 'user', [
          message.content === ''
            ? { type: 'tool_result', tool_use_id: toAnthropicToolId(message.toolCallId) }
            : { type: 'tool_result', tool_use_id: toAnthropicToolId(message.toolCallId), content: message.content },
        ]);
        break;
    }
  }
  return systemTexts.length > 0 ? { system: systemTexts.join('\n\n'), messages: turns } : { messages: turns };
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
    last.content = [
      ...last.content.filter((block) => block.type === 'tool_result'),
      ...last.content.filter((block) => block.type !== 'tool_result'),
    ];
  }
}

function convertUserPart(part: ContentPart): AnthropicRequestBlock[] {
  if (part.type === 'image') return [{ type: 'image', source: convertImageSource(part.url) }];
  // Anthropic rejects text blocks that are empty or only whitespace.
  return part.text.trim() === '' ? [] : [{ type: 'text', text: part.text }];
}

function convertAssistant(content: string | null, toolCalls: ToolCall[]): AnthropicRequestBlock[] {
  const blocks: AnthropicRequestBlock[] = [];
  if (content !== null && content.trim() !== '') blocks.push({ type: 'text', text: content });
  for (const call of toolCalls) {
    blocks.push({ type: 'tool_use', id: toAnthropicToolId(call.id), name: call.name, input: parseToolInput(call.arguments) });
  }
  return blocks;
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
