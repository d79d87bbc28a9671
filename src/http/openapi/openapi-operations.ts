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

const chatEvents = (data: ComponentName[], end: string) => ({
  when: 'optional' as const,
  data,
  description: `With \`stream: true\`: server-sent events in the format of the route, ${end}; a failure after the first event is an error event, not an HTTP status.`,
});

/** A chat route: served by any candidate of an alias, billed, held, limited; its errors those of a provider call. */
function inference(
  spec: Pick<OperationSpec, 'path' | 'operationId' | 'summary' | 'wire' | 'body' | 'answer' | 'externalDocs' | 'description'>,
): OperationSpec {
  const does: ErrorCause[] = ['model', 'key_models', 'routing', 'hold', 'rate', 'availability', 'provider'];
  return { method: 'post', tag: 'Inference', billable: true, scope: 'inference', does, ...spec };
}

/** A read of the account: its key, its query, nothing else that can fail. */
const account = (spec: Pick<OperationSpec, 'path' | 'operationId' | 'summary' | 'answer' | 'query' | 'pathId'>): OperationSpec => ({
  method: 'get',
  tag: 'Account',
  wire: 'either',
  ...spec,
});

const runEvents = 'Server-sent events: `id:` the sequence, `event:` the type, `data:` a FixRunEvent.';

/** A fix run by id. */
const run = (spec: Pick<OperationSpec, 'method' | 'path' | 'operationId' | 'summary' | 'answer' | 'query' | 'pathId'>): OperationSpec => ({
  tag: 'Fix agents',
  wire: 'either',
  scope: 'fix',
  ...spec,
});

const runAnswer = { components: ['FixRun'] as ComponentName[], example: examples.runExample };

export const operations: OperationSpec[] = [
  inference({
    path: '/v1/chat/completions',
    operationId: 'createChatCompletion',
    summary: 'Chat completion (OpenAI format), answered by any candidate of an alias',
    wire: 'openai',
    body: { component: 'ChatCompletionRequest', example: chat.chatRequestExample },
    answer: {
      components: ['ChatCompletion'],
      example: chat.chatCompletionExample,
      events: chatEvents(['ChatCompletionChunk', 'Error'], 'each `data:` a chunk, the last `[DONE]`'),
    },
    externalDocs: OPENAI_CHAT_DOCS,
  }),
  inference({
    path: '/v1/messages',
    operationId: 'createMessage',
    summary: 'Anthropic Messages, answered by any candidate of an alias',
    wire: 'anthropic',
    body: { component: 'MessagesRequest', example: chat.messagesRequestExample },
    answer: {
      components: ['Message'],
      example: chat.messageExample,
      events: chatEvents(['MessageStreamEvent', 'AnthropicError'], '`event:` the type of the data'),
    },
    externalDocs: ANTHROPIC_MESSAGES_DOCS,
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
    answer: { components: ['CountTokens'], example: { input_tokens: 10 } },
    externalDocs: ANTHROPIC_COUNT_TOKENS_DOCS,
    does: ['model', 'key_models', 'context'],
    description: 'The body of a Messages request; max_tokens and stream are not needed.',
  },
  inference({
    path: '/v1/responses',
    operationId: 'createResponse',
    summary: 'OpenAI Responses (stateless), answered by any candidate of an alias',
    wire: 'openai',
    body: { component: 'ResponsesRequest', example: chat.responsesRequestExample },
    answer: {
      components: ['Response'],
      example: chat.responseExample,
      events: chatEvents(['ResponseStreamEvent'], '`event:` the type of the data, a failure response.failed'),
    },
    externalDocs: OPENAI_RESPONSES_DOCS,
  }),
  account({
    path: '/v1/models',
    operationId: 'listModels',
    summary: 'Aliases and models the key may use, with prices; Anthropic-shaped with an anthropic-version header',
    answer: { components: ['ModelList', 'AnthropicModelList'], example: examples.modelListExample },
    query: modelListQuerySchema,
  }),
  account({
    path: '/v1/receipts',
    operationId: 'listReceipts',
    summary: "The account's receipts, newest first",
    answer: { components: ['ReceiptList'], example: { object: 'list', data: [examples.receiptExample], has_more: false } },
    query: receiptsQuerySchema,
  }),
  account({
    path: '/v1/receipts/{id}',
    operationId: 'getReceipt',
    summary: 'One receipt',
    pathId: 'The receipt id (rcpt_...), as in the x-svc-receipt-id header',
    answer: { components: ['Receipt'], example: examples.receiptExample },
  }),
  account({
    path: '/v1/balance',
    operationId: 'getBalance',
    summary: "The account's balance, holds and month against its budget",
    answer: { components: ['Balance'], example: examples.balanceExample },
  }),
  {
    ...account({
      path: '/v1/fix/agents',
      operationId: 'listFixAgents',
      summary: 'Fix agents, their input and tiers with price ranges',
      answer: { components: ['FixAgentList'], example: examples.agentListExample },
    }),
    tag: 'Fix agents',
  },
  {
    method: 'post',
    path: '/v1/fix/quote',
    operationId: 'createFixQuote',
    summary: 'Price a fix; free, holds nothing, valid 5 minutes',
    tag: 'Fix agents',
    wire: 'either',
    scope: 'fix',
    body: { component: 'FixQuoteRequest', example: examples.quoteRequestExample },
    answer: { components: ['FixQuote'], example: examples.quoteExample },
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
  run({
    method: 'get',
    path: '/v1/fix/runs/{id}',
    operationId: 'getFixRun',
    summary: 'A run: status, result, steps, cost',
    answer: runAnswer,
    pathId: 'The run id (run_...), as in the x-svc-run-id header',
  }),
  run({
    method: 'get',
    path: '/v1/fix/runs/{id}/events',
    operationId: 'followFixRun',
    summary: "A run's events from the start (or after `after` / Last-Event-ID), following it to its end",
    pathId: 'The run id (run_...)',
    query: fixRunEventsQuerySchema,
    answer: { components: [], events: { when: 'always', data: ['FixRunEvent'], description: runEvents } },
  }),
  run({
    method: 'post',
    path: '/v1/fix/runs/{id}/cancel',
    operationId: 'cancelFixRun',
    summary: 'Stop a run before its next step; the calls made are charged',
    pathId: 'The run id (run_...)',
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
