import { boolean, enumOf, literal, nullable, object, string, type Infer } from '../lib/wire-schema.ts';
import { errorCatalog, type ErrorCode } from './catalog.ts';

const allCodes = Object.keys(errorCatalog) as ErrorCode[];

/** Every code a /v1 route may answer with (all but the console's own), in catalog order. */
export const apiErrorCodes: ErrorCode[] = allCodes.filter((code) => errorCatalog[code].cause !== 'console');

const unique = <T extends string>(values: T[]) => [...new Set(values)];

const codeSchema = (codes: ErrorCode[]) =>
  enumOf(unique(codes), { description: 'Stable error code of the contract: branch on this, never on the message.' });

/** The `error` object of the OpenAI-style envelope (also `response.error` of a failed Responses stream). */
export function openAIErrorObjectSchema(codes: ErrorCode[] = allCodes) {
  return object(
    {
      message: string({ description: 'For people; may change between versions.' }),
      type: enumOf(unique(codes.map((code) => errorCatalog[code].type))),
      code: codeSchema(codes),
      param: nullable(string(), { description: 'The field or reason the error is about, when there is one.' }),
      retryable: boolean({ description: 'Whether the same request may succeed when sent again (after retry-after, when given).' }),
      request_id: string({ description: 'Also in the x-svc-request-id header; quote it when reporting a problem.' }),
    },
    {},
    { closed: true },
  );
}

/** OpenAI-style `error` envelope of the given codes (every code by default). */
export const openAIErrorSchema = (codes: ErrorCode[] = allCodes) => object({ error: openAIErrorObjectSchema(codes) }, {}, { closed: true });

/** Anthropic-style error body of the given codes, with the contract's fields beside Anthropic's (POST /v1/messages). */
export function anthropicErrorSchema(codes: ErrorCode[] = allCodes) {
  return object(
    {
      type: literal('error'),
      error: object(
        {
          type: enumOf(unique(codes.map((code) => errorCatalog[code].anthropicType))),
          message: string(),
          code: codeSchema(codes),
          retryable: boolean(),
          request_id: string(),
        },
        {},
        { closed: true },
      ),
      request_id: string(),
    },
    {},
    { closed: true },
  );
}

export type OpenAIErrorBody = Infer<ReturnType<typeof openAIErrorSchema>>;
export type AnthropicErrorBody = Infer<ReturnType<typeof anthropicErrorSchema>>;
