import type { ZodTypeAny } from 'zod';
import type { ErrorCode } from '../../errors/catalog.ts';
import { fixRunEventsQuerySchema } from '../../fix/fix-schemas.ts';
import { receiptsQuerySchema } from '../receipt-schema.ts';
import { modelListQuerySchema } from '../model-list-schema.ts';
import { ANTHROPIC_COUNT_TOKENS_DOCS, ANTHROPIC_MESSAGES_DOCS, OPENAI_CHAT_DOCS, OPENAI_RESPONSES_DOCS } from './chat-body-schemas.ts';
import * as examples from './openapi-examples.ts';

/** One /v1 operation of the document: which components it takes and answers, and which error codes it may answer with. */
export interface OperationSpec {
  method: 'get' | 'post';
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** The error body its clients parse; `either`: Anthropic-shaped when the request has an anthropic-version header (error-handling.ts). */
  wire: 'openai' | 'anthropic' | 'either';
  /** Key-free (the document itself). */
  public?: boolean;
  /** Writes a receipt (x-svc-receipt-id). */
  billable?: boolean;
  /** The scope the key needs, if any. */
  scope?: 'inference' | 'fix';
  body?: { component: string; example?: unknown };
  /** The success answer: JSON components (one, or alternatives), and whether `stream: true` turns it into server-sent events. */
  answer: { components: string[]; example?: unknown; stream?: 'optional' | 'always'; eventsDescription?: string };
  query?: ZodTypeAny & { shape: Record<string, ZodTypeAny> };
  pathId?: string;
  externalDocs?: string;
  codes: ErrorCode[];
  description?: string;
}

const AUTH: ErrorCode[] = ['invalid_api_key', 'key_revoked', 'key_expired'];

/** A chat request may fail in every way the catalog has but those of receipts and fix quotes. */
const CHAT: ErrorCode[] = [
  ...AUTH,
  'invalid_request',
  'unsupported_model',
  'unsupported_parameter',
  'model_not_allowed',
  'insufficient_scope',
  'insufficient_balance',
  'budget_exceeded',
  'rate_limit_exceeded',
  'context_too_large',
  'provider_rate_limited',
  'provider_timeout',
  'provider_unavailable',
  'provider_bad_request',
  'provider_invalid_response',
  'provider_auth_error',
  'request_cancelled',
  'internal_error',
];

const READ: ErrorCode[] = [...AUTH, 'invalid_request', 'internal_error'];

const chatEvents =
  'With `stream: true`: server-sent events in the format of the route; a failure after the first event is an error event, not an HTTP status.';

export const operations: OperationSpec[] = [
  {
    method: 'post',
    path: '/v1/chat/completions',
    operationId: 'createChatCompletion',
    summary: 'Chat completion (OpenAI format), answered by any candidate of an alias',
    tag: 'Inference',
    wire: 'openai',
    billable: true,
    scope: 'inference',
    body: { component: 'ChatCompletionRequest', example: examples.chatRequestExample },
    answer: { components: ['ChatCompletion'], example: examples.chatCompletionExample, stream: 'optional', eventsDescription: chatEvents },
    externalDocs: OPENAI_CHAT_DOCS,
    codes: CHAT,
  },
  {
    method: 'post',
    path: '/v1/messages',
    operationId: 'createMessage',
    summary: 'Anthropic Messages, answered by any candidate of an alias',
    tag: 'Inference',
    wire: 'anthropic',
    billable: true,
    scope: 'inference',
    body: { component: 'MessagesRequest', example: examples.messagesRequestExample },
    answer: { components: ['Message'], example: examples.messageExample, stream: 'optional', eventsDescription: chatEvents },
    externalDocs: ANTHROPIC_MESSAGES_DOCS,
    codes: CHAT,
    description:
      'Errors are Anthropic-shaped, with the contract fields (code, retryable, request_id) beside; `x-should-retry` says whether to retry.',
  },
  {
    method: 'post',
    path: '/v1/messages/count_tokens',
    operationId: 'countMessageTokens',
    summary: 'Input tokens of a Messages body for the first candidate of the model asked; free, no receipt',
    tag: 'Inference',
    wire: 'anthropic',
    scope: 'inference',
    body: { component: 'CountTokensRequest', example: { model: 'svc/balanced', messages: [{ role: 'user', content: 'Say hello.' }] } },
    answer: { components: ['CountTokens'], example: { input_tokens: 10 } },
    externalDocs: ANTHROPIC_COUNT_TOKENS_DOCS,
    codes: [...AUTH, 'invalid_request', 'unsupported_model', 'model_not_allowed', 'insufficient_scope', 'context_too_large', 'internal_error'],
  },
  {
    method: 'post',
    path: '/v1/responses',
    operationId: 'createResponse',
    summary: 'OpenAI Responses (stateless), answered by any candidate of an alias',
    tag: 'Inference',
    wire: 'openai',
    billable: true,
    scope: 'inference',
    body: { component: 'ResponsesRequest', example: examples.responsesRequestExample },
    answer: { components: ['Response'], example: examples.responseExample, stream: 'optional', eventsDescription: chatEvents },
    externalDocs: OPENAI_RESPONSES_DOCS,
    codes: CHAT,
  },
  {
    method: 'get',
    path: '/v1/models',
    operationId: 'listModels',
    summary: 'Aliases and models the key may use, with prices; Anthropic-shaped with an anthropic-version header',
    tag: 'Account',
    wire: 'either',
    answer: { components: ['ModelList', 'AnthropicModelList'], example: examples.modelListExample },
    query: modelListQuerySchema,
    codes: READ,
  },
  {
    method: 'get',
    path: '/v1/receipts',
    operationId: 'listReceipts',
    summary: "The account's receipts, newest first",
    tag: 'Account',
    wire: 'either',
    answer: { components: ['ReceiptList'], example: { object: 'list', data: [examples.receiptExample], has_more: false } },
    query: receiptsQuerySchema,
    codes: READ,
  },
  {
    method: 'get',
    path: '/v1/receipts/{id}',
    operationId: 'getReceipt',
    summary: 'One receipt',
    tag: 'Account',
    wire: 'either',
    pathId: 'The receipt id (rcpt_...), as in the x-svc-receipt-id header',
    answer: { components: ['Receipt'], example: examples.receiptExample },
    codes: [...READ, 'not_found'],
  },
  {
    method: 'get',
    path: '/v1/balance',
    operationId: 'getBalance',
    summary: "The account's balance, holds and month against its budget",
    tag: 'Account',
    wire: 'either',
    answer: { components: ['Balance'], example: examples.balanceExample },
    codes: READ,
  },
  {
    method: 'get',
    path: '/v1/fix/agents',
    operationId: 'listFixAgents',
    summary: 'Fix agents, their input and tiers with price ranges',
    tag: 'Fix agents',
    wire: 'either',
    answer: { components: ['FixAgentList'], example: examples.agentListExample },
    codes: READ,
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
    codes: [...AUTH, 'invalid_request', 'insufficient_scope', 'model_not_allowed', 'rate_limit_exceeded', 'provider_unavailable', 'internal_error'],
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
    answer: {
      components: ['FixRun'],
      example: examples.runExample,
      stream: 'optional',
      eventsDescription: 'With `stream: true`: server-sent events, `id:` the sequence, `event:` the type, `data:` a FixRunEvent.',
    },
    codes: [
      ...AUTH,
      'invalid_request',
      'insufficient_scope',
      'model_not_allowed',
      'not_found',
      'quote_expired',
      'insufficient_balance',
      'budget_exceeded',
      'rate_limit_exceeded',
      'internal_error',
    ],
  },
  {
    method: 'get',
    path: '/v1/fix/runs/{id}',
    operationId: 'getFixRun',
    summary: 'A run: status, result, steps, cost',
    tag: 'Fix agents',
    wire: 'either',
    scope: 'fix',
    pathId: 'The run id (run_...), as in the x-svc-run-id header',
    answer: { components: ['FixRun'], example: examples.runExample },
    codes: [...READ, 'insufficient_scope', 'not_found'],
  },
  {
    method: 'get',
    path: '/v1/fix/runs/{id}/events',
    operationId: 'followFixRun',
    summary: "A run's events from the start (or after `after` / Last-Event-ID), following it to its end",
    tag: 'Fix agents',
    wire: 'either',
    scope: 'fix',
    pathId: 'The run id (run_...)',
    query: fixRunEventsQuerySchema,
    answer: {
      components: ['FixRunEvent'],
      stream: 'always',
      eventsDescription: 'Server-sent events: `id:` the sequence, `event:` the type, `data:` a FixRunEvent.',
    },
    codes: [...READ, 'insufficient_scope', 'not_found'],
  },
  {
    method: 'post',
    path: '/v1/fix/runs/{id}/cancel',
    operationId: 'cancelFixRun',
    summary: 'Stop a run before its next step; the calls made are charged',
    tag: 'Fix agents',
    wire: 'either',
    scope: 'fix',
    pathId: 'The run id (run_...)',
    answer: { components: ['FixRun'], example: examples.runExample },
    codes: [...READ, 'insufficient_scope', 'not_found'],
  },
  {
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document; no key needed',
    tag: 'Meta',
    wire: 'either',
    public: true,
    answer: { components: [] },
    codes: ['internal_error'],
  },
];
