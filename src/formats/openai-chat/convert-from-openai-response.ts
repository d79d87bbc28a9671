import type { ToolCall } from '../../canonical/chat-request.ts';
import type { ChatResult } from '../../canonical/chat-result.ts';
import { isRecord, type OpenAIChatCompletion, type OpenAIChoice } from './openai-chat-wire-types.ts';
import { invalidResponse, providerFailedError } from './openai-chat-errors.ts';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.ts';
import { usageOf } from './parse-openai-usage.ts';
import { readOpenAIMessage } from './read-openai-message.ts';

/**
 * A non-streaming chat.completion -> canonical result. Throws ProviderError: unavailable for
 * an error the provider reported in a 200 body (OpenRouter does), invalid_response for a body
 * without choices[0].message.
 * https://platform.openai.com/docs/api-reference/chat/object
 */
export function convertFromOpenAIResponse(body: unknown): ChatResult {
  if (!isRecord(body)) throw invalidResponse('the body is not an object');
  const completion = body as OpenAIChatCompletion;
  if (completion.error) throw providerFailedError(completion.error);
  const choice = firstChoice(completion.choices);
  const message = choice?.message;
  if (!isRecord(message)) throw invalidResponse('no choices[0].message');

  const { text, reasoning } = readOpenAIMessage(message);
  const toolCalls: ToolCall[] = (Array.isArray(message.tool_calls) ? message.tool_calls : []).filter(isRecord).map((call, index) => {
    const fn = isRecord(call.function) ? call.function : {};
    return {
      id: typeof call.id === 'string' && call.id !== '' ? call.id : `call_${index}`,
      name: typeof fn.name === 'string' ? fn.name : '',
      arguments: typeof fn.arguments === 'string' && fn.arguments !== '' ? fn.arguments : '{}',
    };
  });
  const result: ChatResult = { content: text, toolCalls, finishReason: mapOpenAIFinishReason(choice!.finish_reason, toolCalls.length > 0) };
  if (reasoning) result.reasoning = reasoning;
  const usage = usageOf(completion);
  if (usage) result.usage = usage;
  return result;
}

/** The choice with index 0: a request with `n` > 1 gets more, and only the first is the answer. */
export function firstChoice(choices: unknown): OpenAIChoice | undefined {
  if (!Array.isArray(choices)) return undefined;
  const records = choices.filter(isRecord) as OpenAIChoice[];
  return records.find((choice) => (choice.index ?? 0) === 0);
}
