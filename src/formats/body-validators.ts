import { readMessagesBody } from './anthropic-messages/parse-messages-request.ts';
import { readChatCompletionBody } from './openai-chat/parse-chat-request.ts';
import { readResponsesBody } from './openai-responses/parse-responses-request.ts';

/** The request body checkers of the three wire formats the gateway answers. */
const validators = [readChatCompletionBody, readMessagesBody, readResponsesBody];

/**
 * Compiles the three body checkers, so the first request of each kind does not wait 40-60 ms
 * for its own: the app calls it before it listens. Once per process; later calls cost nothing.
 */
export function compileBodyValidators(): void {
  for (const validator of validators) validator.compile();
}

/** Whether all three body checkers are compiled. */
export function validatorsReady(): boolean {
  return validators.every((validator) => validator.compiled());
}
