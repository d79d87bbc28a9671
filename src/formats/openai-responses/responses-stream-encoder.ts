import type { ToolCall } from '../../canonical/chat-request.ts';
import type { FinishReason, Usage } from '../../canonical/chat-result.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import type { ParsedResponsesRequest } from './parse-responses-request.ts';
import { compactionItem } from './response-compaction.ts';
import {
  customToolInput,
  incompleteReason,
  isCustomTool,
  itemId,
  messageItem,
  outputText,
  reasoningItem,
  responseObject,
  summaryText,
  toolCallItem,
  toolCallPrefix,
  type ResponseContext,
  type ResponseStatus,
} from './render-response.ts';

/** The message or reasoning item being written; one at a time. */
interface OpenTextItem {
  kind: 'message' | 'reasoning';
  outputIndex: number;
  id: string;
  text: string;
}

/** A tool call being written; calls stay open until the answer finishes. */
interface OpenCall {
  outputIndex: number;
  id: string;
  call: ToolCall;
  custom: boolean;
}

/**
 * Canonical stream parts -> Responses API server-sent events
 * (https://platform.openai.com/docs/api-reference/responses-streaming): response.created and
 * in_progress, then per output item `output_item.added`, its deltas and `.done` events, and
 * `output_item.done`, then response.completed with the whole response and usage. Every event
 * carries `sequence_number`, counted from 0; items get their `output_index` in order of opening.
 *
 * A truncated answer (finish length or content_filter) still ends with response.completed, its
 * status `incomplete`: Codex retries a stream without response.completed whole, each retry paid.
 * Custom tool input is sent when the call ends: it is the `input` field of JSON arguments, which
 * cannot be cut out of partial JSON.
 */
export class ResponsesStreamEncoder {
  private sequence = 0;
  private nextOutputIndex = 0;
  /** Finished items by output index. */
  private readonly output: unknown[] = [];
  private openText: OpenTextItem | null = null;
  private readonly openCalls = new Map<number, OpenCall>();
  private answered = false;
  private finishReason: FinishReason = 'stop';
  /** A compaction's note, written as one item once the answer finished. */
  private note = '';

  constructor(
    private readonly context: ResponseContext,
    private readonly parsed: ParsedResponsesRequest,
  ) {}

  private event(type: string, payload: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...payload })}\n\n`;
  }

  private response(status: ResponseStatus, usage: Usage | null, error: Record<string, unknown> | null = null) {
    const output = this.output.filter((item) => item !== undefined);
    const reason = status === 'incomplete' ? incompleteReason(this.finishReason) : null;
    return responseObject(this.context, this.parsed, { status, output, usage, incompleteReason: reason, error });
  }

  start(): string {
    const response = this.response('in_progress', null);
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  /** Encode one part; '' for parts with nothing to send. */
  part(part: StreamPart): string {
    if (this.parsed.compaction) return this.compactionPart(part);
    switch (part.type) {
      case 'text-delta':
        return part.text ? this.textDelta('message', part.text) : '';
      case 'reasoning-delta':
        // Reasoning goes out as a summary, and only when the client asked for summaries.
        return part.text && this.parsed.reasoningSummary ? this.textDelta('reasoning', part.text) : '';
      case 'tool-call-start':
        return this.startCall(part.index, part.id, part.name);
      case 'tool-call-delta':
        return this.callDelta(part.index, part.argumentsDelta);
      case 'finish':
        return this.finish(part.finishReason);
      default:
        // Parts this wire format has no event for.
        return '';
    }
  }

  /** After the finish part: the terminal event with the whole response and usage. */
  end(usage: Usage): string {
    const status = incompleteReason(this.finishReason) ? 'incomplete' : 'completed';
    return this.event('response.completed', { response: this.response(status, usage) });
  }

  /** A failure after the stream began: response.failed, whose `response.error` carries the contract's fields. */
  fail(error: Record<string, unknown>): string {
    return this.event('response.failed', { response: this.response('failed', null, error) });
  }

  /** A compaction answers one item, whole, at the end: its note is the model's text. */
  private compactionPart(part: StreamPart): string {
    if (part.type === 'text-delta') this.note += part.text;
    if (part.type !== 'finish') return '';
    this.finishReason = part.finishReason;
    const outputIndex = this.nextOutputIndex++;
    const item = compactionItem(itemId(this.context.id, 'cmp', outputIndex), this.note);
    this.output[outputIndex] = item;
    return (
      this.event('response.output_item.added', { output_index: outputIndex, item }) +
      this.event('response.output_item.done', { output_index: outputIndex, item })
    );
  }

  private textDelta(kind: OpenTextItem['kind'], delta: string): string {
    let events = '';
    if (this.openText?.kind !== kind) events += this.closeText() + this.openTextItem(kind);
    const item = this.openText!;
    item.text += delta;
    const at = { item_id: item.id, output_index: item.outputIndex };
    if (kind === 'message') return events + this.event('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] });
    return events + this.event('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta });
  }

  private openTextItem(kind: OpenTextItem['kind']): string {
    const outputIndex = this.nextOutputIndex++;
    const id = itemId(this.context.id, kind === 'message' ? 'msg' : 'rs', outputIndex);
    this.openText = { kind, outputIndex, id, text: '' };
    const at = { item_id: id, output_index: outputIndex };
    if (kind === 'message') {
      this.answered = true;
      return (
        this.event('response.output_item.added', { output_index: outputIndex, item: messageItem(id, null, 'in_progress') }) +
        this.event('response.content_part.added', { ...at, content_index: 0, part: outputText('') })
      );
    }
    return (
      this.event('response.output_item.added', { output_index: outputIndex, item: reasoningItem(id, null) }) +
      this.event('response.reasoning_summary_part.added', { ...at, summary_index: 0, part: summaryText('') })
    );
  }

  private closeText(): string {
    const item = this.openText;
    if (!item) return '';
    this.openText = null;
    const at = { item_id: item.id, output_index: item.outputIndex };
    if (item.kind === 'message') {
      const done = messageItem(item.id, item.text);
      this.output[item.outputIndex] = done;
      return (
        this.event('response.output_text.done', { ...at, content_index: 0, text: item.text, logprobs: [] }) +
        this.event('response.content_part.done', { ...at, content_index: 0, part: outputText(item.text) }) +
        this.event('response.output_item.done', { output_index: item.outputIndex, item: done })
      );
    }
    const done = reasoningItem(item.id, item.text);
    this.output[item.outputIndex] = done;
    return (
      this.event('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: item.text }) +
      this.event('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: summaryText(item.text) }) +
      this.event('response.output_item.done', { output_index: item.outputIndex, item: done })
    );
  }

  private startCall(index: number, callId: string, name: string): string {
    if (this.openCalls.has(index)) return '';
    const events = this.closeText();
    const origins = this.parsed.toolOrigins;
    const outputIndex = this.nextOutputIndex++;
    const open: OpenCall = {
      outputIndex,
      id: itemId(this.context.id, toolCallPrefix(name, origins), outputIndex),
      call: { id: callId, name, arguments: '' },
      custom: isCustomTool(name, origins),
    };
    this.openCalls.set(index, open);
    this.answered = true;
    return (
      events + this.event('response.output_item.added', { output_index: outputIndex, item: toolCallItem(open.id, open.call, origins, 'in_progress') })
    );
  }

  private callDelta(index: number, delta: string): string {
    const open = this.openCalls.get(index);
    if (!open || delta === '') return '';
    open.call.arguments += delta;
    if (open.custom) return '';
    return this.event('response.function_call_arguments.delta', { item_id: open.id, output_index: open.outputIndex, delta });
  }

  private closeCall(open: OpenCall): string {
    const done = toolCallItem(open.id, open.call, this.parsed.toolOrigins);
    this.output[open.outputIndex] = done;
    const at = { item_id: open.id, output_index: open.outputIndex };
    let events: string;
    if (open.custom) {
      const input = customToolInput(open.call.arguments);
      events =
        (input ? this.event('response.custom_tool_call_input.delta', { ...at, delta: input }) : '') +
        this.event('response.custom_tool_call_input.done', { ...at, input });
    } else {
      events = this.event('response.function_call_arguments.done', { ...at, name: done.name, arguments: open.call.arguments });
    }
    return events + this.event('response.output_item.done', { output_index: open.outputIndex, item: done });
  }

  /** Close every open item in output order; an answer with nothing in it still gets an empty message. */
  private finish(reason: FinishReason): string {
    this.finishReason = reason;
    let events = '';
    if (!this.answered) events += this.closeText() + this.openTextItem('message');
    const text = this.openText;
    const calls = [...this.openCalls.values()];
    this.openCalls.clear();
    const pending: Array<{ outputIndex: number; close: () => string }> = calls.map((call) => ({
      outputIndex: call.outputIndex,
      close: () => this.closeCall(call),
    }));
    if (text) pending.push({ outputIndex: text.outputIndex, close: () => this.closeText() });
    pending.sort((left, right) => left.outputIndex - right.outputIndex);
    for (const entry of pending) events += entry.close();
    return events;
  }
}
