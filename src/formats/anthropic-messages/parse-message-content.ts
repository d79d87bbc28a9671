import type { CacheControl, ChatMessage, ContentPart, ReasoningBlock, ToolCall } from '../../canonical/chat-request.ts';
import { invalid, isObject } from '../read-fields.ts';

/**
 * Anthropic `system` and `messages` -> canonical messages. Cache breakpoints, signed thinking
 * and tool-result images are kept so an Anthropic model gets them back unchanged.
 * https://docs.anthropic.com/en/api/messages#body-messages
 */

function cacheControlOf(block: Record<string, unknown>, at: string): CacheControl | undefined {
  const value = block.cache_control;
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) invalid(`${at}.cache_control must be an object`);
  return value;
}

function withCache<Part extends object>(part: Part, cacheControl: CacheControl | undefined): Part {
  return cacheControl === undefined ? part : { ...part, providerOptions: { anthropic: { cacheControl } } };
}

/** `system`, or a `role: "system"` message: a string or text blocks -> one system message per block. */
export function systemMessages(content: unknown, at: string): ChatMessage[] {
  if (typeof content === 'string') return content === '' ? [] : [{ role: 'system', content }];
  if (!Array.isArray(content)) invalid(`${at} must be a string or an array of text blocks`);
  return content.map((block, index) => {
    const blockAt = `${at}[${index}]`;
    if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') invalid(`${blockAt} must be a text block`);
    return withCache<ChatMessage>({ role: 'system', content: block.text }, cacheControlOf(block, blockAt));
  });
}

function imagePart(block: Record<string, unknown>, at: string): ContentPart {
  const source = block.source;
  if (!isObject(source)) invalid(`${at}.source must be an object`);
  let url: string;
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || typeof source.data !== 'string') invalid(`${at}.source needs media_type and data`);
    url = `data:${source.media_type};base64,${source.data}`;
  } else if (source.type === 'url') {
    if (typeof source.url !== 'string' || source.url === '') invalid(`${at}.source.url must be a string`);
    url = source.url;
  } else {
    invalid(`${at}.source.type must be base64 or url`);
  }
  return withCache<ContentPart>({ type: 'image', url }, cacheControlOf(block, at));
}

/** A text or image block, in a user turn or inside a tool result. */
function contentPart(block: unknown, at: string): ContentPart {
  if (!isObject(block)) invalid(`${at} must be an object`);
  switch (block.type) {
    case 'text':
      if (typeof block.text !== 'string') invalid(`${at}.text must be a string`);
      return withCache<ContentPart>({ type: 'text', text: block.text }, cacheControlOf(block, at));
    case 'image':
      return imagePart(block, at);
    case 'document': {
      // Plain-text documents are text to any model; PDFs and files have no canonical part yet.
      const source = block.source;
      if (isObject(source) && source.type === 'text' && typeof source.data === 'string') {
        return withCache<ContentPart>({ type: 'text', text: source.data }, cacheControlOf(block, at));
      }
      return invalid(`${at}: only documents with a text source are supported`);
    }
    default:
      return invalid(`${at}.type ${JSON.stringify(block.type)} is not supported; use text, image or tool_result`);
  }
}

function toolResult(block: Record<string, unknown>, at: string): ChatMessage {
  if (typeof block.tool_use_id !== 'string' || block.tool_use_id === '') invalid(`${at}.tool_use_id must be a string`);
  const raw = block.content;
  let content: string | ContentPart[];
  if (raw === undefined || raw === null) content = '';
  else if (typeof raw === 'string') content = raw;
  else if (Array.isArray(raw)) content = raw.map((part, index) => contentPart(part, `${at}.content[${index}]`));
  else invalid(`${at}.content must be a string or an array of text and image blocks`);
  const message: ChatMessage = { role: 'tool', toolCallId: block.tool_use_id, content };
  if (block.is_error === true) message.isError = true;
  return withCache(message, cacheControlOf(block, at));
}

/** A user turn: its tool results (as tool messages) first, as Anthropic orders them, then the rest. */
function userMessages(content: unknown, at: string): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content: [{ type: 'text', text: content }] }];
  if (!Array.isArray(content)) invalid(`${at} must be a string or an array of content blocks`);
  const results: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  content.forEach((block, index) => {
    const blockAt = `${at}[${index}]`;
    if (isObject(block) && block.type === 'tool_result') results.push(toolResult(block, blockAt));
    else parts.push(contentPart(block, blockAt));
  });
  return parts.length > 0 ? [...results, { role: 'user', content: parts }] : results;
}

function assistantMessage(content: unknown, at: string): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  if (!Array.isArray(content)) invalid(`${at} must be a string or an array of content blocks`);
  let text: string | null = null;
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningBlock[] = [];
  let cacheControl: CacheControl | undefined;
  content.forEach((block, index) => {
    const blockAt = `${at}[${index}]`;
    if (!isObject(block)) invalid(`${blockAt} must be an object`);
    switch (block.type) {
      case 'text':
        if (typeof block.text !== 'string') invalid(`${blockAt}.text must be a string`);
        text = (text ?? '') + block.text;
        break;
      case 'thinking':
        if (typeof block.thinking !== 'string') invalid(`${blockAt}.thinking must be a string`);
        reasoning.push(typeof block.signature === 'string' ? { text: block.thinking, signature: block.signature } : { text: block.thinking });
        break;
      case 'redacted_thinking':
        if (typeof block.data !== 'string') invalid(`${blockAt}.data must be a string`);
        reasoning.push({ redacted: block.data });
        break;
      case 'tool_use':
        if (typeof block.id !== 'string' || typeof block.name !== 'string') invalid(`${blockAt} needs id and name`);
        if (block.input !== undefined && !isObject(block.input)) invalid(`${blockAt}.input must be an object`);
        toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
        break;
      default:
        // Blocks of Anthropic's own tools (server_tool_use and their results) have no canonical
        // form; the turn keeps everything else rather than failing.
        return;
    }
    cacheControl = cacheControlOf(block, blockAt) ?? cacheControl;
  });
  const message: ChatMessage = { role: 'assistant', content: text };
  if (toolCalls.length > 0) message.toolCalls = toolCalls;
  if (reasoning.length > 0) message.reasoning = reasoning;
  return withCache(message, cacheControl);
}

/** One Anthropic message -> one or more canonical messages. */
export function convertMessage(value: unknown, index: number): ChatMessage[] {
  const at = `messages[${index}]`;
  if (!isObject(value)) invalid(`${at} must be an object`);
  switch (value.role) {
    case 'user':
      return userMessages(value.content, `${at}.content`);
    case 'assistant':
      return [assistantMessage(value.content, `${at}.content`)];
    case 'system':
      // Claude Code sends its prompt this way for models it does not know.
      return systemMessages(value.content, `${at}.content`);
    default:
      return invalid(`${at}.role must be user or assistant`);
  }
}
