import { z } from 'zod';
import { usdPerMillionToNano } from '../lib/money.ts';

/** USD amount written as a number or a decimal string ("0.40"). Kept exact as integer nano-USD. */
const usdPerMillion = z.union([z.string(), z.number()]).transform((value, context) => {
  try {
    return usdPerMillionToNano(String(value));
  } catch (error) {
    context.addIssue({ code: z.ZodIssueCode.custom, message: (error as Error).message });
    return z.NEVER;
  }
});

const reasoningEffort = z.enum(['low', 'medium', 'xhigh']);

const simulatedScriptEntry = z
  .object({
    /** Substring (case-insensitive) of the last user message that selects this entry; absent matches all. */
    match: z.string().optional(),
    reply: z.string().optional(),
    /**
     * One reply per turn, for scripted conversations (a fix model's broken edit, then a good
     * one): the n-th answers a conversation with n-1 assistant turns, the last one every later
     * turn. With `replies`, `match` is looked for in the conversation's first user message.
     */
    replies: z.array(z.string()).min(1).optional(),
    tool_call: z.object({ name: z.string(), arguments: z.record(z.unknown()).default({}) }).optional(),
    fail: z.enum(['rate_limited', 'timeout', 'unavailable', 'bad_request', 'invalid_response', 'auth']).optional(),
    /** Fail mid-stream after this many text pieces. */
    fail_after_chunks: z.number().int().nonnegative().optional(),
  })
  .strict();

const provider = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'lower-case letters, digits, - and _'),
    kind: z.enum(['openai', 'anthropic', 'simulated']),
    base_url: z.string().url().optional(),
    api_key: z.string().optional(),
    /** Time allowed to receive response headers, and between two pieces of a body. */
    timeout_ms: z.number().int().positive().default(60_000),
    /** Keep-alive connections kept per provider. */
    connections: z.number().int().positive().default(64),
    /** Extra headers sent upstream on every call (e.g. OpenRouter attribution). */
    headers: z.record(z.string()).default({}),
    simulated: z
      .object({
        latency_ms: z.number().int().nonnegative().default(200),
        tokens_per_second: z.number().positive().default(80),
        script: z.array(simulatedScriptEntry).default([]),
      })
      .strict()
      .default({}),
  })
  .strict()
  .superRefine((value, context) => {
    if (value.kind !== 'simulated' && !value.base_url) {
      context.addIssue({ code: z.ZodIssueCode.custom, path: ['base_url'], message: `required for kind ${value.kind}` });
    }
  })
  .transform((value) => ({
    id: value.id,
    kind: value.kind,
    baseUrl: (value.base_url ?? '').replace(/\/+$/, ''),
    apiKey: value.api_key,
    timeoutMs: value.timeout_ms,
    connections: value.connections,
    headers: value.headers,
    simulated: {
      latencyMs: value.simulated.latency_ms,
      tokensPerSecond: value.simulated.tokens_per_second,
      script: value.simulated.script,
    },
  }));

const model = z
  .object({
    id: z.string().regex(/^[^/\s]+\/\S+$/, 'must look like provider/name'),
    provider: z.string(),
    upstream: z.string().optional(),
    price: z
      .object({
        input: usdPerMillion,
        cached_input: usdPerMillion.optional(),
        cache_write: usdPerMillion.optional(),
        output: usdPerMillion,
      })
      .strict(),
    context_window: z.number().int().positive(),
    max_output_tokens: z.number().int().positive(),
    /** Most an image can count as input tokens for this model. */
    max_image_tokens: z.number().int().positive().default(1_600),
    capabilities: z
      .object({
        tools: z.boolean().default(false),
        vision: z.boolean().default(false),
        reasoning: z.boolean().default(false),
        /**
         * Answers in a JSON schema natively (OpenAI response_format; Anthropic structured outputs
         * via output_config). Default: true for OpenAI-compatible and simulated providers, false
         * for Anthropic ones, which then get a forced tool instead.
         */
        structured_output: z.boolean().optional(),
      })
      .strict()
      .default({}),
  })
  .strict()
  .transform((value) => ({
    id: value.id,
    provider: value.provider,
    upstream: value.upstream ?? value.id.slice(value.id.indexOf('/') + 1),
    price: {
      inputNanoPerMillion: value.price.input,
      cachedInputNanoPerMillion: value.price.cached_input ?? value.price.input,
      cacheWriteNanoPerMillion: value.price.cache_write ?? value.price.input,
      outputNanoPerMillion: value.price.output,
    },
    contextWindow: value.context_window,
    maxOutputTokens: value.max_output_tokens,
    maxImageTokens: value.max_image_tokens,
    capabilities: value.capabilities,
  }));

const alias = z
  .object({
    candidates: z.array(z.string()).min(1),
    reasoning: reasoningEffort,
  })
  .strict();

export const configSchema = z
  .object({
    server: z
      .object({
        host: z.string().default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8787),
        /** Largest request body accepted, in bytes. */
        body_limit_bytes: z
          .number()
          .int()
          .positive()
          .default(8 * 1024 * 1024),
        /** On SIGTERM, how long requests, streams and fix runs in flight may go on before they are cut. */
        drain_ms: z.number().int().nonnegative().default(10_000),
        /** On SIGTERM, the deadline of each step after the drain (settling, releasing holds, closing each client). */
        close_timeout_ms: z.number().int().positive().default(5_000),
      })
      .strict()
      .default({}),
    database: z
      .object({ path: z.string().default('./data/gateway.db') })
      .strict()
      .default({}),
    limits: z
      .object({
        /** Requests per minute for keys without their own rate limit; 0 turns the default off. */
        default_rate_limit_per_minute: z.number().int().nonnegative().default(600),
        /** A hold whose process stops renewing it is released after this long. */
        hold_ttl_seconds: z.number().int().min(5).default(60),
      })
      .strict()
      .default({}),
    logging: z
      .object({
        /** One info line per request (ids, key prefix, models, status, error code, cost, timings); never a key, prompt or secret. */
        requests: z.boolean().default(true),
      })
      .strict()
      .default({}),
    metrics: z
      .object({
        /** Serve GET /metrics (Prometheus text format, no API key). */
        enabled: z.boolean().default(true),
        /** Serve it on this port alone (and not on the public one); unset: on the main port. */
        port: z.number().int().min(0).max(65535).optional(),
        /** Where the metrics port listens. */
        host: z.string().default('127.0.0.1'),
      })
      .strict()
      .default({}),
    health: z
      .object({
        /** Consecutive failures of a model's own (timeout, 5xx, connection, 429) that cool it down. */
        failures_to_cool: z.number().int().positive().default(5),
        /** How long routing skips a cooled-down model before one probe request tries it again. */
        cool_down_seconds: z.number().positive().default(30),
        /** A failed probe doubles the cool-down, up to this. */
        max_cool_down_seconds: z.number().positive().default(300),
      })
      .strict()
      .default({}),
    console: z
      .object({
        /** host[:port] the sign-in message names, e.g. console.example.com; default: the address the gateway listens on. */
        domain: z
          .string()
          .regex(/^[a-z0-9.-]+(:\d{1,5})?$/i, 'host[:port], without a scheme')
          .optional(),
        /** scheme://host[:port] the console is served from; default: http://<domain>. */
        origin: z
          .string()
          .url()
          .refine((value) => /^https?:\/\/[^/]+$/.test(value.replace(/\/$/, '')), 'scheme://host[:port], without a path')
          .optional(),
        /** Chains a wallet may sign in on. */
        chain_ids: z.array(z.number().int().positive()).min(1).default([1]),
        /** JSON-RPC URL per chain id, for smart-contract wallets (ERC-1271, ERC-6492). */
        rpc_url: z.record(z.string().regex(/^\d+$/, 'a chain id'), z.string().url()).default({}),
        /** The address that owns the workspace from the start; unset: the first address to sign in does. */
        owner: z
          .string()
          .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address of 40 hex digits')
          .optional(),
      })
      .strict()
      .default({})
      .transform((value) => ({
        domain: value.domain,
        origin: value.origin?.replace(/\/$/, ''),
        chainIds: value.chain_ids,
        rpcUrls: Object.fromEntries(Object.entries(value.rpc_url).map(([chain, url]) => [Number(chain), url])) as Record<number, string>,
        /** Lower-case, as members are stored. */
        owner: value.owner?.toLowerCase(),
      })),
    providers: z.array(provider).min(1),
    models: z.array(model).min(1),
    aliases: z.object({ 'svc/fast': alias, 'svc/balanced': alias, 'svc/best': alias }).strict(),
  })
  .strict()
  .superRefine((config, context) => {
    const providerIds = new Set<string>();
    config.providers.forEach((entry, index) => {
      if (providerIds.has(entry.id))
        context.addIssue({ code: 'custom', path: ['providers', index, 'id'], message: `duplicate provider id ${entry.id}` });
      providerIds.add(entry.id);
    });
    const modelIds = new Set<string>();
    config.models.forEach((entry, index) => {
      if (modelIds.has(entry.id)) context.addIssue({ code: 'custom', path: ['models', index, 'id'], message: `duplicate model id ${entry.id}` });
      modelIds.add(entry.id);
      if (!providerIds.has(entry.provider)) {
        context.addIssue({ code: 'custom', path: ['models', index, 'provider'], message: `unknown provider ${entry.provider}` });
      }
      if (entry.maxOutputTokens > entry.contextWindow) {
        context.addIssue({ code: 'custom', path: ['models', index, 'max_output_tokens'], message: 'larger than context_window' });
      }
    });
    for (const chain of Object.keys(config.console.rpcUrls)) {
      if (!config.console.chainIds.includes(Number(chain))) {
        context.addIssue({ code: 'custom', path: ['console', 'rpc_url', chain], message: `chain ${chain} is not in console.chain_ids` });
      }
    }
    for (const [name, entry] of Object.entries(config.aliases)) {
      entry.candidates.forEach((candidate, index) => {
        if (!modelIds.has(candidate)) {
          context.addIssue({ code: 'custom', path: ['aliases', name, 'candidates', index], message: `unknown model ${candidate}` });
        }
      });
    }
  })
  .transform((config) => {
    const kinds = new Map(config.providers.map((entry) => [entry.id, entry.kind]));
    for (const entry of config.models) entry.capabilities.structured_output ??= kinds.get(entry.provider) !== 'anthropic';
    return config;
  });

export type GatewayConfig = z.output<typeof configSchema>;
export type ProviderConfig = GatewayConfig['providers'][number];
export type ModelConfig = GatewayConfig['models'][number];
export type AliasName = keyof GatewayConfig['aliases'];
export type SimulatedScriptEntry = z.output<typeof simulatedScriptEntry>;
