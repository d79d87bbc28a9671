import type { CacheControl, ChatMessage, ContentPart, ReasoningBlock, ToolCall } from '../../canonical/chat-request.ts';
import type { AssistantContent, MessageBody, SystemContent, UserContent } from './messages-request-schema.ts';

/**
 * Anthropic `system` and `messages`, as their schema let them through -> canonical messages.
 * Cache breakpoints, signed thinking and tool-result images are kept so an Anthropic model gets
 * them back unchanged.
 */

type UserBlock = Exclude<UserContent, string>[number];
type Cached = { cache_control?: CacheControl | null };

function withCache<Part extends object>(part: Part, block: Cached): Part {
  return block.cache_control ? { ...part, providerOptions: { anthropic: { cacheControl: block.cache_control } } } : part;
}

/** `system`, or a `role: "system"` message: a string or text blocks -> one system message per block. */
export function systemMessages(content: SystemContent): ChatMessage[] {
  if (typeof content === 'string') return content === '' ? [] : [{ role: 'system', content }];
  return content.map((block) => withCache<ChatMessage>({ role: 'system', content: block.text }, block));
}

/** A text, image or text-document block, in a user turn or inside a tool result. */
function contentPart(block: Exclude<UserBlock, { type: 'tool_result' }>): ContentPart {
  switch (block.type) {
    case 'text':
      return withCache<ContentPart>({ type: 'text', text: block.text }, block);
    case 'document':
      return withCache<ContentPart>({ type: 'text', text: block.source.data }, block);
    case 'image': {
      const { source } = block;
      const url = source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
      return withCache<ContentPart>({ type: 'image', url }, block);
    }
  }
}

function toolResult(block: Extract<UserBlock, { type: 'tool_result' }>): ChatMessage {
  const raw = block.content;
  const content = raw === undefined || raw === null ? '' : typeof raw === 'string' ? raw : raw.map(contentPart);
  const message: ChatMessage = { role: 'tool', toolCallId: block.tool_use_id, content };
  if (block.is_error === true) message.isError = true;
  return withCache(message, block);
}

/** A user turn: its tool results (as tool messages) first, as Anthropic orders them, then the rest. */
function userMessages(content: UserContent): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content: [{ type: 'text', text: content }] }];
  const results: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const block of content) {
    if (block.type === 'tool_result') results.push(toolResult(block));
    else parts.push(contentPart(block));
  }
  return parts.length > 0 ? [...results, { role: 'user', content: parts }] : results;
}

function assistantMessage(content: AssistantContent): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  let text: string | null = null;
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningBlock[] = [];
  let cacheControl: CacheControl | undefined;
  for (const block of content) {
    switch (block.type) {
      case 'text':
        text = (text ?? '') + block.text;
        break;
      case 'thinking':
        reasoning.push(
          typeof block.signature === 'string'
            ? { text: block.thinking, providerOptions: { anthropic: { signature: block.signature } } }
            : { text: block.thinking },
        );
        break;
      case 'redacted_thinking':
        reasoning.push({ text: '', providerOptions: { anthropic: { redactedData: block.data } } });
        break;
      case 'tool_use':
        toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
        break;
      default:
        // Blocks of Anthropic's own tools: left out (see the schema).
        continue;
    }
    cacheControl = block.cache_control ?? cacheControl;
  }
  const message: ChatMessage = { role: 'assistant', content: text };
  if (toolCalls.length > 0) message.toolCalls = toolCalls;
  if (reasoning.length > 0) message.reasoning = reasoning;
  return cacheControl ? { ...message, providerOptions: { anthropic: { cacheControl } } } : message;
}

/** One Anthropic message -> one or more canonical messages. */
export function convertMessage(value: MessageBody): ChatMessage[] {
  switch (value.role) {
    case 'user':
      return userMessages(value.content);
    case 'assistant':
      return [assistantMessage(value.content)];
    case 'system':
      return systemMessages(value.content);
  }
}
