import { invalid, isAbsent } from '../read-fields.ts';

/** Fields that only make sense with server-side state. */
const STATEFUL_FIELDS: Record<string, string> = {
  previous_response_id:
    'previous_response_id needs stored responses; the gateway is stateless: send the whole conversation in input (with store: false)',
  conversation: 'conversation needs stored conversations; the gateway is stateless: send the whole conversation in input',
  prompt: 'prompt templates are stored objects; the gateway is stateless: send instructions and input instead',
};

/**
 * The gateway is stateless: what needs a stored object (a previous response, a conversation, a
 * prompt template, a background response) is refused with a message saying what to send instead.
 */
export function refuseStatefulFields(body: Record<string, unknown>): void {
  for (const [field, message] of Object.entries(STATEFUL_FIELDS)) if (!isAbsent(body[field])) invalid(message);
  if (body.background === true) invalid('background responses are stored and polled; the gateway is stateless: stream instead');
}
