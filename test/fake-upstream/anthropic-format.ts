import { anthropicTextTokens, countAnthropicPromptTokens } from './count-prompt-tokens.ts';
import { splitIntoPieces, type ResolvedReply } from './scripted-reply.ts';
import { randomId, type WireEvent, type WireFormat } from './wire-format.ts';

/** Anthropic Messages, as https://docs.anthropic.com/en/api/messages and .../messages-streaming document it. */
export const anthropicFormat: WireFormat = {
  path: '/v1/messages',

  validate: validateAnthropicRequest,

  newToolCallId: () => `toolu_${randomId(24)}`,

  countPromptTokens: countAnthropicPromptTokens,

  countTextTokens: anthropicTextTokens,

  responseHeaders: () => ({ 'request-id': `req_${randomId(24)}`, 'anthropic-organization-id': 'fake-org' }),

  body(reply, request) {
    return {
      id: `msg_${randomId(24)}`,
      type: 'message',
      role: 'assistant',
      model: reply.model,
      content: contentBlocks(reply).map((block) => block.complete),
      stop_reason: anthropicStopReason(reply.finishReason),
      stop_sequence: stopSequence(reply, request),
      usage: { ...inputUsage(reply), output_tokens: reply.usage.completion, service_tier: 'standard' },
    };
  },

  streamEvents(reply, request) {
    const events: WireEvent[] = [];
    const push = (type: string, payload: Record<string, unknown>, content = false): void => {
      events.push({ event: type, data: JSON.stringify({ type, ...payload }), content });
    };
    push('message_start', {
      message: {
        id: `msg_${randomId(24)}`,
        type: 'message',
        role: 'assistant',
        model: reply.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // Anthropic reports the input side here and the final output count in message_delta.
        usage: { ...inputUsage(reply), output_tokens: 1, service_tier: 'standard' },
      },
    });
    if (reply.ping) push('ping', {});
    contentBlocks(reply).forEach((block, index) => {
      push('content_block_start', { index, content_block: block.start }, block.startIsContent);
      for (const delta of block.deltas) push('content_block_delta', { index, delta: delta.delta }, delta.content);
      push('content_block_stop', { index });
    });
    push('message_delta', {
      delta: { stop_reason: anthropicStopReason(reply.finishReason), stop_sequence: stopSequence(reply, request) },
      usage: { output_tokens: reply.usage.completion },
    });
    push('message_stop', {});
    return events;
  },

  errorBody(status, message) {
    const known = ANTHROPIC_ERRORS[status] ?? (status >= 500 ? ANTHROPIC_ERRORS[500]! : ANTHROPIC_ERRORS[400]!);
    return { type: 'error', error: { type: known.type, message: message ?? known.message } };
  },

  streamErrorEvent: () => ({
    event: 'error',
    data: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    content: false,
  }),
};

const ANTHROPIC_ERRORS: Record<number, { type: string; message: string }> = {
  400: { type: 'invalid_request_error', message: 'Invalid request.' },
  401: { type: 'authentication_error', message: 'invalid x-api-key' },
  403: { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' },
  404: { type: 'not_found_error', message: 'The requested resource could not be found.' },
  413: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
  429: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.' },
  500: { type: 'api_error', message: 'Internal server error' },
  529: { type: 'overloaded_error', message: 'Overloaded' },
};

interface Block {
  complete: Record<string, unknown>;
  start: Record<string, unknown>;
  startIsContent: boolean;
  deltas: Array<{ delta: Record<string, unknown>; content: boolean }>;
}

/** Thinking first, then text, then tool uses, the order Claude answers in. */
function contentBlocks(reply: ResolvedReply): Block[] {
  const blocks: Block[] = [];
  const pieces = (text: string): string[] => splitIntoPieces(text, reply.chunkSize);
  if (reply.reasoning !== '') {
    blocks.push({
      complete: { type: 'thinking', thinking: reply.reasoning, signature: reply.signature },
      start: { type: 'thinking', thinking: '', signature: '' },
      startIsContent: false,
      deltas: [
        ...pieces(reply.reasoning).map((thinking) => ({ delta: { type: 'thinking_delta', thinking }, content: true })),
        { delta: { type: 'signature_delta', signature: reply.signature }, content: false },
      ],
    });
  }
  if (reply.redactedThinking !== undefined) {
    const block = { type: 'redacted_thinking', data: reply.redactedThinking };
    blocks.push({ complete: block, start: block, startIsContent: false, deltas: [] });
  }
  if (reply.text !== '' || (reply.reasoning === '' && reply.toolCalls.length === 0)) {
    blocks.push({
      complete: { type: 'text', text: reply.text },
      start: { type: 'text', text: '' },
      startIsContent: false,
      deltas: pieces(reply.text).map((text) => ({ delta: { type: 'text_delta', text }, content: true })),
    });
  }
  for (const call of reply.toolCalls) {
    blocks.push({
      complete: { type: 'tool_use', id: call.id, name: call.name, input: parseInput(call.arguments) },
      start: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      startIsContent: true,
      deltas: [
        // Anthropic opens every tool input with an empty fragment.
        { delta: { type: 'input_json_delta', partial_json: '' }, content: false },
        ...pieces(call.arguments).map((partial_json) => ({ delta: { type: 'input_json_delta', partial_json }, content: true })),
      ],
    });
  }
  return blocks;
}

function parseInput(argumentsText: string): unknown {
  try {
    return JSON.parse(argumentsText);
  } catch {
    return {};
  }
}

function inputUsage(reply: ResolvedReply): Record<string, number> {
  const { prompt, cached, cacheWrite } = reply.usage;
  return {
    input_tokens: Math.max(0, prompt - cached - cacheWrite),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cached,
  };
}

function anthropicStopReason(finishReason: string): string {
  switch (finishReason) {
    case 'stop':
      return 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return finishReason;
  }
}

function stopSequence(reply: ResolvedReply, request: Record<string, unknown>): string | null {
  if (reply.finishReason !== 'stop_sequence') return null;
  const sequences = request.stop_sequences;
  return Array.isArray(sequences) && typeof sequences[0] === 'string' ? sequences[0] : null;
}

/** The checks of the real API that an adapter is most likely to trip, with its wording. */
function validateAnthropicRequest(headers: Record<string, unknown>, body: Record<string, unknown>): string | undefined {
  if (headers['anthropic-version'] === undefined) return 'anthropic-version: header is required';
  if (typeof body.model !== 'string') return 'model: Field required';
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (!Array.isArray(body.messages)) return 'messages: Field required';
  for (const [index, message] of body.messages.entries()) {
    const role = (message as { role?: unknown } | null)?.role;
    if (role !== 'user' && role !== 'assistant') return `messages.${index}.role: Input should be 'user' or 'assistant'`;
  }
  const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  if (thinking?.type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (typeof budget !== 'number' || budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (budget >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`';
    if (body.temperature !== undefined && body.temperature !== 1) {
      return '`temperature` may only be set to 1 when thinking is enabled.';
    }
    if (typeof body.top_p === 'number' && body.top_p < 0.95) return '`top_p` must be unset or between 0.95 and 1 when thinking is enabled.';
  }
  return undefined;
}
