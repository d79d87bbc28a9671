import { GatewayError } from '../../errors/gateway-error.ts';

/** How many earlier responses one socket keeps: Codex names only its last one, so a few are plenty. */
const KEPT = 8;

/**
 * The earlier responses of one Responses socket, so that a `response.create` naming one in
 * `previous_response_id` and sending only the new items resolves to the whole conversation, as
 * OpenAI resolves it, even with `store: false` (Codex sends its turns so). Kept in memory for
 * the socket's life only: nothing is stored, and another socket cannot name them.
 */
export class ResponseChain {
  /** Response id -> the conversation once it answered: its whole input, then its output items. */
  private readonly conversations = new Map<string, unknown[]>();

  /**
   * The body of a `response.create` frame as a stateless Responses body: its whole conversation
   * in `input` (the named response's, then the new items), without the frame's own fields.
   */
  resolve(frame: Record<string, unknown>): Record<string, unknown> {
    const { type: _type, generate: _generate, previous_response_id: previous, ...body } = frame;
    if (previous === undefined || previous === null) return body;
    const earlier = typeof previous === 'string' ? this.conversations.get(previous) : undefined;
    if (!earlier) {
      throw new GatewayError(
        'invalid_request',
        `previous_response_id ${JSON.stringify(previous)} names no earlier response on this socket; send the whole conversation in input.`,
        {},
        'previous_response_id',
      );
    }
    return { ...body, input: [...earlier, ...inputItems(body.input)] };
  }

  /** Keeps what `id` answered to `input`, for the turns that name it. */
  remember(id: string, input: unknown, output: readonly unknown[]): void {
    this.conversations.set(id, [...inputItems(input), ...output]);
    for (const old of this.conversations.keys()) {
      if (this.conversations.size <= KEPT) break;
      this.conversations.delete(old);
    }
  }
}

/** `input` as a list of items: a string is one user message (the schema refuses anything else later). */
function inputItems(input: unknown): unknown[] {
  if (Array.isArray(input)) return input;
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return input === undefined || input === null ? [] : [input];
}
