import type { FastifyRequest } from 'fastify';
import type { ApiKeyRecord } from '../storage/records.ts';
import type { RequestLifecycle } from './request-lifecycle.ts';

export type WireFormat = 'openai' | 'anthropic';

/** Per-route options read by the shared error handling. */
export interface RouteOptions {
  /** Which error body the route's clients parse. */
  wire?: WireFormat;
}

declare module 'fastify' {
  interface FastifyRequest {
    requestId: string;
    /** Set by the /v1 key scopes' hook (v1-api.ts). */
    apiKey: ApiKeyRecord | null;
    /** Model requests only: their one metered lifecycle (request-lifecycle.ts). */
    lifecycle: RequestLifecycle | null;
  }
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging adds the route options to Fastify's config
  interface FastifyContextConfig extends RouteOptions {}
}

export function routeOptions(request: FastifyRequest): RouteOptions {
  return (request.routeOptions.config ?? {}) as RouteOptions;
}

/** The key of a request under /v1: its scope's hook authenticated it before the handler runs. */
export function authenticatedKey(request: FastifyRequest): ApiKeyRecord {
  return request.apiKey!;
}
