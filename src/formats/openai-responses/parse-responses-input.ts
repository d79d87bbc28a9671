import type { ChatMessage, ContentPart, TextPart, ToolCall } from '../../canonical/chat-request.ts';
import type { InputItem, ResponsesRequestBody, UserPart } from './responses-request-schema.ts';
import { COMPACTION_REQUEST, compactionNote } from './response-compaction.ts';
import { canonicalToolName } from './responses-tools.ts';

/**
 * Responses API `input`, as its schema let it through -> canonical messages.
 * https://platform.openai.com/docs/api-reference/responses/create#responses-create-input
 *
 * The gateway is stateless, so the whole conversation is in `input`. Items the model reads are
 * translated (messages, function and custom tool calls and their outputs); items only the
 * provider that made them can read are dropped: `reasoning` (with `store: false` Codex sends
 * back `encrypted_content` that only OpenAI can decrypt), OpenAI's `compaction` (the gateway's
 * own is read: response-compaction.ts), and calls of hosted
 * tools (web search, local shell...). References to stored objects are refused by the schema.
 */

type MessageItem = Extract<InputItem, { role: string }>;
type CallItem = Extract<InputItem, { type: 'function_call' | 'custom_tool_call' }>;
type OutputItem = Extract<InputItem, { type: 'function_call_output' | 'custom_tool_call_output' }>;
type MessageText = Exclude<MessageItem, { role: 'user' }>['content'];

function userPart(part: UserPart): ContentPart {
  if (part.type !== 'input_image') return { type: 'text', text: part.text };
  return part.detail ? { type: 'image', url: part.image_url, detail: part.detail } : { type: 'image', url: part.image_url };
}

/** The text of a system, developer or assistant message. */
function messageText(content: MessageText): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'refusal' ? part.refusal : part.text)).join('\n');
}

/** A tool output: a string, content parts (text and images), or the `{content, success}` object of older Codex versions. */
function toolResult(item: OutputItem): ChatMessage {
  const { call_id: toolCallId, output } = item;
  if (typeof output === 'string') return { role: 'tool', toolCallId, content: output };
  if (!Array.isArray(output)) {
    return output.success === false
      ? { role: 'tool', toolCallId, content: output.content, isError: true }
      : { role: 'tool', toolCallId, content: output.content };
  }
  const parts = output.map(userPart);
  const content = parts.every((part): part is TextPart => part.type === 'text') ? parts.map((part) => part.text).join('\n') : parts;
  return { role: 'tool', toolCallId, content };
}

function message(item: MessageItem): ChatMessage {
  switch (item.role) {
    case 'system':
    case 'developer':
      return { role: item.role, content: messageText(item.content) };
    case 'assistant':
      return { role: 'assistant', content: messageText(item.content) };
    case 'user': {
      const { content } = item;
      return { role: 'user', content: typeof content === 'string' ? [{ type: 'text', text: content }] : content.map(userPart) };
    }
  }
}

function toolCall(item: CallItem): ToolCall {
  const name = canonicalToolName(item.name, item.namespace || undefined);
  if (item.type === 'custom_tool_call') return { id: item.call_id, name, arguments: JSON.stringify({ input: item.input }) };
  return { id: item.call_id, name, arguments: item.arguments ?? '' };
}

/** A call joins the assistant message just before it, as chat completions keep them together. */
function appendToolCall(messages: ChatMessage[], call: ToolCall): void {
  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    last.toolCalls = [...(last.toolCalls ?? []), call];
    return;
  }
  messages.push({ role: 'assistant', content: null, toolCalls: [call] });
}

function addItem(messages: ChatMessage[], item: InputItem): void {
  switch (item.type) {
    case undefined:
    case 'message':
      messages.push(message(item));
      return;
    case 'function_call':
    case 'custom_tool_call':
      appendToolCall(messages, toolCall(item));
      return;
    case 'function_call_output':
    case 'custom_tool_call_output':
      messages.push(toolResult(item));
      return;
    case 'compaction_trigger':
      messages.push({ role: 'user', content: [{ type: 'text', text: COMPACTION_REQUEST }] });
      return;
    case 'compaction': {
      // The gateway's own compaction holds a note any model reads; OpenAI's is dropped below.
      const note = compactionNote(item.encrypted_content);
      if (note !== null) messages.push({ role: 'user', content: [{ type: 'text', text: note }] });
      return;
    }
    default:
      // reasoning, compaction, hosted-tool calls and their outputs, and item types newer than
      // this translator: the model can answer without them, so the turn goes on.
      return;
  }
}

/** Tool results whose call was dropped would be refused by every provider; they go too. */
function withoutOrphanResults(messages: ChatMessage[]): ChatMessage[] {
  const called = new Set<string>();
  return messages.filter((entry) => {
    if (entry.role === 'assistant') for (const call of entry.toolCalls ?? []) called.add(call.id);
    return entry.role !== 'tool' || called.has(entry.toolCallId);
  });
}

/** `instructions` and `input` -> canonical messages, instructions first as the system prompt. */
export function translateInput(input: ResponsesRequestBody['input'], instructions: string | null | undefined): ChatMessage[] {
  const messages: ChatMessage[] = instructions ? [{ role: 'system', content: instructions }] : [];
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: [{ type: 'text', text: input }] });
    return messages;
  }
  for (const item of input) addItem(messages, item);
  return withoutOrphanResults(messages);
}
