import { z } from 'zod';
import { errorCatalog, type ErrorCode } from './catalog.ts';

/** The console's own codes: never on a /v1 route. */
const CONSOLE_CODES: readonly ErrorCode[] = ['session_required', 'sign_in_refused', 'not_a_member', 'owner_only', 'csrf_failed'];

const allCodes = Object.keys(errorCatalog) as ErrorCode[];

/** Every code a /v1 route may answer with, in catalog order. */
export const apiErrorCodes: ErrorCode[] = allCodes.filter((code) => !CONSOLE_CODES.includes(code));

const enumOf = <T extends string>(values: T[]) => z.enum([...new Set(values)] as [T, ...T[]]);

const codeSchema = (codes: ErrorCode[]) => enumOf(codes).describe('Stable error code of the contract: branch on this, never on the message.');

/** OpenAI-style `error` envelope of the given codes (every code by default). */
export function openAIErrorSchema(codes: ErrorCode[] = allCodes) {
  return z
    .object({
      error: z
        .object({
          message: z.string().describe('For people; may change between versions.'),
          type: enumOf(codes.map((code) => errorCatalog[code].type)),
          code: codeSchema(codes),
          param: z.string().nullable().describe('The field or reason the error is about, when there is one.'),
          retryable: z.boolean().describe('Whether the same request may succeed when sent again (after retry-after, when given).'),
          request_id: z.string().describe('Also in the x-svc-request-id header; quote it when reporting a problem.'),
        })
        .strict(),
    })
    .strict();
}

/** Anthropic-style error body of the given codes, with the contract's fields beside Anthropic's (POST /v1/messages). */
export function anthropicErrorSchema(codes: ErrorCode[] = allCodes) {
  return z
    .object({
      type: z.literal('error'),
      error: z
        .object({
          type: enumOf(codes.map((code) => errorCatalog[code].anthropicType)),
          message: z.string(),
          code: codeSchema(codes),
          retryable: z.boolean(),
          request_id: z.string(),
        })
        .strict(),
      request_id: z.string(),
    })
    .strict();
}

export type OpenAIErrorBody = z.infer<ReturnType<typeof openAIErrorSchema>>;
export type AnthropicErrorBody = z.infer<ReturnType<typeof anthropicErrorSchema>>;
