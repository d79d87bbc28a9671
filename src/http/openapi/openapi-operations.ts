import type { ZodTypeAny } from 'zod';
import { errorCodesOf, type ErrorCause, type ErrorCode } from '../../errors/catalog.ts';
import { fixRunEventsQuerySchema } from '../../fix/fix-schemas.ts';
import { ANTHROPIC_COUNT_TOKENS_DOCS, ANTHROPIC_MESSAGES_DOCS } from '../../formats/anthropic-messages/messages-request-schema.ts';
import { OPENAI_CHAT_DOCS } from '../../formats/openai-chat/chat-request-schema.ts';
import { OPENAI_RESPONSES_DOCS } from '../../formats/openai-responses/responses-request-schema.ts';
import { modelListQuerySchema } from '../model-list-schema.ts';
import { receiptsQuerySchema } from '../receipt-schema.ts';
import type { ComponentName } from './openapi-components.ts';
import * as chat from './openapi-chat-examples.ts';
import * as examples from './openapi-examples.ts';

/** One /v1 operation of the document: what it takes and answers, and what it does that can fail. */
export interface OperationSpec {
  method: 'get' | 'post';
  path: string;
  operationId: string;
  summary: string;
  tag: 'Inference' | 'Account' | 'Fix agents' | 'Meta';
  /** The error body its clients parse; `either`: Anthropic-shaped when the request has an anthropic-version header (error-handling.ts). */
  wire: 'openai' | 'anthropic' | 'either';
  /** Key-free (the document itself). */
  public?: boolean;
  /** Writes a receipt (x-svc-receipt-id). */
  billable?: boolean;
  /** The scope the key needs, if any. */
  scope?: 'inference' | 'fix';
  body?: { component: ComponentName; example?: unknown };
  /**
   * The success answer: JSON components (one, or alternatives); with `events`, server-sent
   * events, `always` or when the body says `stream: true`, each event's data one of `data`.
   */
  answer: {
    components: ComponentName[];
    example?: unknown;
    events?: { when: 'optional' | 'always'; data: ComponentName[]; description: string };
  };
  query?: ZodTypeAny & { shape: Record<string, ZodTypeAny> };
  pathId?: string;
  externalDocs?: string;
  /** What it does that can fail beyond taking a key, reading its input, needing its scope and finding the path's id. */
  does?: ErrorCause[];
  description?: string;
}

/** The error codes of an operation, from the catalog's causes of what it does. */
export function errorCodesOfOperation(operation: OperationSpec): ErrorCode[] {
  const causes: ErrorCause[] = [...(operation.does ?? [])];
  if (!operation.public) causes.push('key', 'input');
  if (operation.scope) causes.push('scope');
  if (operation.pathId) causes.push('lookup');
  return errorCodesOf(causes);
}

type Answer = OperationSpec['answer'];
type Events = NonNullable<Answer['events']>;

/** A success answer: its component, an example, and the events it may stream instead. */
const answerOf = (component: ComponentName, example: unknown, events?: Events): Answer => ({ components: [component], example, events });

/** With `stream: true`, server-sent events in the format of the route. */
const chatEvents = (data: ComponentName[], end: string): Events => ({
  when: 'optional',
  data,
  description: `With \`stream: true\`: server-sent events in the format of the route, ${end}; a failure after the first event is an error event, not an HTTP status.`,
});

type InferenceSpec = Pick<OperationSpec, 'summary' | 'answer' | 'description'> & { body: [ComponentName, unknown] };

/** A chat route: served by any candidate of an alias, billed, held, limited; its errors those of a provider call. */
function inference(path: string, operationId: string, wire: OperationSpec['wire'], externalDocs: string, spec: InferenceSpec): OperationSpec {
  const does: ErrorCause[] = ['model', 'key_models', 'routing', 'hold', 'rate', 'availability', 'provider'];
  const [component, example] = spec.body;
  return {
    method: 'post',
    path,
    operationId,
    tag: 'Inference',
    wire,
    billable: true,
    scope: 'inference',
    does,
    externalDocs,
    ...spec,
    body: { component, example },
  };
}

type ReadSpec = Pick<OperationSpec, 'summary' | 'answer' | 'query' | 'pathId'>;

/** A read of the account: its key and its query are what can fail. */
const account = (path: string, operationId: string, spec: ReadSpec, tag: OperationSpec['tag'] = 'Account'): OperationSpec => ({
  method: 'get',
  path,
  operationId,
  tag,
  wire: 'either',
  ...spec,
});

/** A fix run by id. */
const run = (method: OperationSpec['method'], path: string, operationId: string, spec: ReadSpec): OperationSpec => ({
  ...account(path, operationId, spec, 'Fix agents'),
  method,
  scope: 'fix',
});

const chunks = chatEvents(['ChatCompletionChunk', 'Error'], 'each `data:` a chunk, the last `[DONE]`');
const messageEvents = chatEvents(['MessageStreamEvent', 'AnthropicError'], '`event:` the type of the data');
const responseEvents = chatEvents(['ResponseStreamEvent'], '`event:` the type of the data, a failure response.failed');

const runEvents = 'Server-sent events: `id:` the sequence, `event:` the type, `data:` a FixRunEvent.';
const runAnswer = answerOf('FixRun', examples.runExample);
const runId = 'The run id (run_...)';

export const operations: OperationSpec[] = [
  inference('/v1/chat/completions', 'createChatCompletion', 'openai', OPENAI_CHAT_DOCS, {
    summary: 'Chat completion (OpenAI format), answered by any candidate of an alias',
    body: ['ChatCompletionRequest', chat.chatRequestExample],
    answer: answerOf('ChatCompletion', chat.chatCompletionExample, chunks),
  }),
  inference('/v1/messages', 'createMessage', 'anthropic', ANTHROPIC_MESSAGES_DOCS, {
    summary: 'Anthropic Messages, answered by any candidate of an alias',
    body: ['MessagesRequest', chat.messagesRequestExample],
    answer: answerOf('Message', chat.messageExample, messageEvents),
    description:
      'Errors are Anthropic-shaped, with the contract fields (code, retryable, request_id) beside; `x-should-retry` says whether to retry.',
  }),
  {
    method: 'post',
    path: '/v1/messages/count_tokens',
    operationId: 'countMessageTokens',
    summary: 'Input tokens of a Messages body for the first candidate of the model asked; free, no receipt',
    tag: 'Inference',
    wire: 'anthropic',
    scope: 'inference',
    body: { component: 'MessagesRequest', example: chat.countTokensRequestExample },
    answer: answerOf('CountTokens', { input_tokens: 10 }),
    externalDocs: ANTHROPIC_COUNT_TOKENS_DOCS,
    does: ['model', 'key_models', 'context'],
    description: 'The body of a Messages request; max_tokens and stream are not needed.',
  },
  inference('/v1/responses', 'createResponse', 'openai', OPENAI_RESPONSES_DOCS, {
    summary: 'OpenAI Responses (stateless), answered by any candidate of an alias',
    body: ['ResponsesRequest', chat.responsesRequestExample],
    answer: answerOf('Response', chat.responseExample, responseEvents),
  }),
  account('/v1/models', 'listModels', {
    summary: 'Aliases and models the key may use, with prices; Anthropic-shaped with an anthropic-version header',
    answer: { components: ['ModelList', 'AnthropicModelList'], example: examples.modelListExample },
    query: modelListQuerySchema,
  }),
  account('/v1/receipts', 'listReceipts', {
    summary: "The account's receipts, newest first",
    answer: answerOf('ReceiptList', { object: 'list', data: [examples.receiptExample], has_more: false }),
    query: receiptsQuerySchema,
  }),
  account('/v1/receipts/{id}', 'getReceipt', {
    summary: 'One receipt',
    pathId: 'The receipt id (rcpt_...), as in the x-svc-receipt-id header',
    answer: answerOf('Receipt', examples.receiptExample),
  }),
  account('/v1/balance', 'getBalance', {
    summary: "The account's balance, holds and month against its budget",
    answer: answerOf('Balance', examples.balanceExample),
  }),
  account(
    '/v1/fix/agents',
    'listFixAgents',
    { summary: 'Fix agents, their input and tiers with price ranges', answer: answerOf('FixAgentList', examples.agentListExample) },
    'Fix agents',
  ),
  {
    method: 'post',
    path: '/v1/fix/quote',
    operationId: 'createFixQuote',
    summary: 'Price a fix; free, holds nothing, valid 5 minutes',
    tag: 'Fix agents',
    wire: 'either',
    billable: true,
    scope: 'fix',
    body: { component: 'FixQuoteRequest', example: examples.quoteRequestExample },
    answer: answerOf('FixQuote', examples.quoteExample),
    does: ['key_models', 'rate', 'availability', 'context'],
  },
  {
    method: 'post',
    path: '/v1/fix/runs',
    operationId: 'createFixRun',
    summary: 'Run a quote once, holding its maximum; the finished run, or its events',
    tag: 'Fix agents',
    wire: 'either',
    billable: true,
    scope: 'fix',
    body: { component: 'FixRunRequest', example: { quote: examples.quoteExample.id } },
    answer: { ...runAnswer, events: { when: 'optional', data: ['FixRunEvent'], description: `With \`stream: true\`: ${runEvents}` } },
    does: ['key_models', 'lookup', 'quote', 'hold', 'rate', 'availability'],
  },
  run('get', '/v1/fix/runs/{id}', 'getFixRun', {
    summary: 'A run: status, result, steps, cost',
    answer: runAnswer,
    pathId: `${runId}, as in the x-svc-run-id header`,
  }),
  run('get', '/v1/fix/runs/{id}/events', 'followFixRun', {
    summary: "A run's events from the start (or after `after` / Last-Event-ID), following it to its end",
    pathId: runId,
    query: fixRunEventsQuerySchema,
    answer: { components: [], events: { when: 'always', data: ['FixRunEvent'], description: runEvents } },
  }),
  run('post', '/v1/fix/runs/{id}/cancel', 'cancelFixRun', {
    summary: 'Stop a run before its next step; the calls made are charged',
    pathId: runId,
    answer: runAnswer,
  }),
  {
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document; no key needed',
    tag: 'Meta',
    wire: 'either',
    public: true,
    answer: { components: [] },
  },
];
