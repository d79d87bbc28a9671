import type { ChatMessage, ContentPart, TextPart, ToolCall } from '../../canonical/chat-request.ts';
import { canonicalToolName } from './responses-tools.ts';
import { invalid, isObject } from '../read-fields.ts';

/**
 * Responses API `input` -> canonical messages.
 * https://platform.openai.com/docs/api-reference/responses/create#responses-create-input
 *
 * The gateway is stateless, so the whole conversation is in `input`. Items the model reads are
 * translated (messages, function and custom tool calls and their outputs); items only the
 * provider that made them can read are dropped: `reasoning` (with `store: false` Codex sends
 * back `encrypted_content` that only OpenAI can decrypt), `compaction`, and calls of hosted
 * tools (web search, local shell...). References to stored objects cannot be resolved and are
 * refused: `item_reference`, `file_id` images and files.
 */

const TEXT_PART_TYPES = new Set(['input_text', 'output_text', 'text', 'summary_text', 'reasoning_text']);

function imageDetail(value: unknown): 'auto' | 'low' | 'high' | undefined {
  return value === 'auto' || value === 'low' || value === 'high' ? value : undefined;
}

/** One content part of a user message. */
function userPart(part: unknown, at: string): ContentPart {
  if (!isObject(part)) invalid(`${at} must be an object`);
  if (typeof part.type === 'string' && TEXT_PART_TYPES.has(part.type)) {
    if (typeof part.text !== 'string') invalid(`${at}.text must be a string`);
    return { type: 'text', text: part.text };
  }
  if (part.type === 'input_image') {
    if (typeof part.image_url !== 'string' || part.image_url === '') {
      invalid(`${at}.image_url is required: the gateway keeps no files, so file_id cannot be resolved`);
    }
    const detail = imageDetail(part.detail);
    return detail ? { type: 'image', url: part.image_url, detail } : { type: 'image', url: part.image_url };
  }
  return invalid(`${at}.type ${JSON.stringify(part.type)} is not supported; send input_text or input_image`);
}

/** The text of a system, developer or assistant message. */
function messageText(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) invalid(`${at} must be a string or an array of content parts`);
  return content
    .map((part, index) => {
      if (!isObject(part)) invalid(`${at}[${index}] must be an object`);
      if (part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
      if (typeof part.type !== 'string' || !TEXT_PART_TYPES.has(part.type) || typeof part.text !== 'string') {
        invalid(`${at}[${index}] must be a text part`);
      }
      return part.text;
    })
    .join('\n');
}

/**
 * A tool output: a string, content parts (text and images), or the `{content, success}` object
 * older Codex versions send for a failed call.
 */
function toolResult(item: Record<string, unknown>, at: string): ChatMessage {
  const toolCallId = requiredString(item, 'call_id', at);
  const output = item.output;
  if (typeof output === 'string') return { role: 'tool', toolCallId, content: output };
  if (isObject(output) && typeof output.content === 'string') {
    return output.success === false
      ? { role: 'tool', toolCallId, content: output.content, isError: true }
      : { role: 'tool', toolCallId, content: output.content };
  }
  if (!Array.isArray(output)) invalid(`${at}.output must be a string or an array of content parts`);
  const parts = output.map((part, index) => userPart(part, `${at}.output[${index}]`));
  const content = parts.every((part): part is TextPart => part.type === 'text') ? parts.map((part) => part.text).join('\n') : parts;
  return { role: 'tool', toolCallId, content };
}

function message(item: Record<string, unknown>, at: string): ChatMessage {
  const role = item.role;
  switch (role) {
    case 'system':
    case 'developer':
      return { role, content: messageText(item.content, `${at}.content`) };
    case 'user': {
      const content = item.content;
      if (typeof content === 'string') return { role: 'user', content: [{ type: 'text', text: content }] };
      if (!Array.isArray(content)) invalid(`${at}.content must be a string or an array of content parts`);
      return { role: 'user', content: content.map((part, index) => userPart(part, `${at}.content[${index}]`)) };
    }
    case 'assistant':
      return { role: 'assistant', content: messageText(item.content, `${at}.content`) };
    default:
      return invalid(`${at}.role must be one of user, assistant, system, developer`);
  }
}

function requiredString(item: Record<string, unknown>, field: string, at: string): string {
  const value = item[field];
  if (typeof value !== 'string' || value === '') invalid(`${at}.${field} is required`);
  return value;
}

function toolCall(item: Record<string, unknown>, at: string): ToolCall {
  const namespace = typeof item.namespace === 'string' && item.namespace !== '' ? item.namespace : undefined;
  const name = canonicalToolName(requiredString(item, 'name', at), namespace);
  const id = requiredString(item, 'call_id', at);
  if (item.type === 'custom_tool_call') {
    if (typeof item.input !== 'string') invalid(`${at}.input must be a string`);
    return { id, name, arguments: JSON.stringify({ input: item.input }) };
  }
  const args = item.arguments ?? '';
  if (typeof args !== 'string') invalid(`${at}.arguments must be a string`);
  return { id, name, arguments: args };
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

function addItem(messages: ChatMessage[], item: unknown, at: string): void {
  if (!isObject(item)) invalid(`${at} must be an object`);
  // Easy input messages may leave out `type`.
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  switch (type) {
    case 'message':
      messages.push(message(item, at));
      return;
    case 'function_call':
    case 'custom_tool_call':
      appendToolCall(messages, toolCall(item, at));
      return;
    case 'function_call_output':
    case 'custom_tool_call_output':
      messages.push(toolResult(item, at));
      return;
    case 'item_reference':
      return invalid(`${at}: item_reference needs stored items; the gateway is stateless, send the item itself`);
    default:
      if (typeof type !== 'string') invalid(`${at}.type is required`);
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
export function translateInput(input: unknown, instructions: string | undefined): ChatMessage[] {
  const messages: ChatMessage[] = instructions ? [{ role: 'system', content: instructions }] : [];
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: [{ type: 'text', text: input }] });
    return messages;
  }
  if (!Array.isArray(input)) invalid('input must be a string or an array of items');
  input.forEach((item, index) => addItem(messages, item, `input[${index}]`));
  return withoutOrphanResults(messages);
}
