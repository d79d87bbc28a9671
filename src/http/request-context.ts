import type { FastifyRequest } from 'fastify';
import type { MeteredRequest } from '../billing/request-meter.ts';
import type { ApiKeyRecord } from '../storage/records.ts';

export type WireFormat = 'openai' | 'anthropic';

/** Per-route options read by the shared hooks. */
export interface RouteOptions {
  /** Which error body the route's clients parse. */
  wire?: WireFormat;
  /** Public routes (health) skip API-key auth. */
  public?: boolean;
  /** Billable routes get a receipt for every authenticated request. */
  billable?: string;
  /** Counted by the key's rate limit without a receipt of their own (fix quotes and runs). */
  rateLimited?: boolean;
  /** Console routes: authenticated by session cookie, never by API key (http/console). */
  console?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    requestId: string;
    receiptId: string;
    apiKey: ApiKeyRecord | null;
    metered: MeteredRequest | null;
  }
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging adds the route options to Fastify's config
  interface FastifyContextConfig extends RouteOptions {}
}

export function routeOptions(request: FastifyRequest): RouteOptions {
  return (request.routeOptions.config ?? {}) as RouteOptions;
}

export function authenticatedKey(request: FastifyRequest): ApiKeyRecord {
  return request.apiKey!;
}
