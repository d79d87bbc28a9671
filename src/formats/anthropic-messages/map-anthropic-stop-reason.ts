import type { FinishReason } from '../../canonical/chat-result.ts';

/**
 * Anthropic stop_reason -> canonical finish reason.
 * https://docs.anthropic.com/en/api/handling-stop-reasons
 */
export function mapAnthropicStopReason(stopReason: string | null | undefined): FinishReason {
  switch (stopReason) {
    // pause_turn: a server tool paused a long turn; the answer so far is complete as far as the client can tell.
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // Unknown or missing reasons (new API values) must not fail a finished answer.
      return 'stop';
  }
}
