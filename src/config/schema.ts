import { z } from 'zod';
import { usdPerMillionToNano } from '../lib/money.ts';
import { decimalTextOf } from '../catalog/exact-price.ts';
import { resolveConfiguredModels } from '../catalog/configured-models.ts';
import { CATALOG_VENDORS } from '../catalog/catalog-data.ts';
import { vendorOfBaseUrl } from '../catalog/price-catalog.ts';
import type { ModelConfig, ModelEntry } from '../catalog/resolve-model.ts';
import type { AppliedPrices } from '../storage/records.ts';

/** The aliases the contract names: every config has them. */
export const CONTRACT_ALIASES = ['svc/fast', 'svc/balanced', 'svc/best'] as const;

/** USD amount written as a number or a decimal string ("0.40"). Kept exact as integer nano-USD. */
const usdPerMillion = z.union([z.string(), z.number()]).transform((value, context) => {
  try {
    return usdPerMillionToNano(typeof value === 'number' ? decimalTextOf(value) : value);
  } catch (error) {
    context.addIssue({ code: z.ZodIssueCode.custom, message: (error as Error).message });
    return z.NEVER;
  }
});

const reasoningEffort = z.enum(['low', 'medium', 'xhigh']);
type ReasoningEffort = z.infer<typeof reasoningEffort>;

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
    /**
     * Whose prices the catalog gives this provider's models (`none`: every model priced in the
     * config). Default: the vendor whose API the base URL is, else anthropic or openai by kind.
     */
    catalog: z.enum(['none', ...CATALOG_VENDORS]).optional(),
    /** Send a prompt_cache_key the gateway derives when the client sent none; default: the provider is OpenAI's API. */
    prompt_cache_key: z.boolean().optional(),
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
    catalog: value.catalog ?? vendorOfBaseUrl(value.base_url ?? '') ?? (value.kind === 'simulated' ? 'none' : value.kind),
    promptCacheKey: value.prompt_cache_key ?? (value.kind === 'openai' && vendorOfBaseUrl(value.base_url ?? '') === 'openai'),
    simulated: {
      latencyMs: value.simulated.latency_ms,
      tokensPerSecond: value.simulated.tokens_per_second,
      script: value.simulated.script,
    },
  }));

const priceFields = {
  input: usdPerMillion,
  cached_input: usdPerMillion.optional(),
  cache_write: usdPerMillion.optional(),
  output: usdPerMillion,
};

function appliedPrices(value: { input: number; cached_input?: number; cache_write?: number; output: number }): AppliedPrices {
  return {
    inputNanoPerMillion: value.input,
    cachedInputNanoPerMillion: value.cached_input ?? value.input,
    cacheWriteNanoPerMillion: value.cache_write ?? value.input,
    outputNanoPerMillion: value.output,
  };
}

const price = z
  .object({
    ...priceFields,
    /** Higher prices for prompts of more than `above_input_tokens` (every token of such a request). */
    tiers: z
      .array(z.object({ above_input_tokens: z.number().int().positive(), ...priceFields }).strict())
      .default([])
      .refine((tiers) => tiers.every((tier, index) => index === 0 || tier.above_input_tokens > tiers[index - 1]!.above_input_tokens), {
        message: 'tiers must go up in above_input_tokens',
      }),
  })
  .strict()
  .transform((value) => ({
    base: appliedPrices(value),
    tiers: value.tiers.map((tier) => ({ aboveInputTokens: tier.above_input_tokens, price: appliedPrices(tier) })),
  }));

/**
 * A model: only `id` and `provider` are needed; what else it leaves out comes from the catalog
 * (config/../catalog). An id `<namespace>/*` allows every upstream model of its provider.
 */
const model = z
  .object({
    id: z.string().regex(/^[^/\s]+\/\S+$/, 'must look like provider/name'),
    provider: z.string(),
    upstream: z.string().optional(),
    price: price.optional(),
    context_window: z.number().int().positive().optional(),
    max_output_tokens: z.number().int().positive().optional(),
    /** Most an image can count as input tokens for this model. */
    max_image_tokens: z.number().int().positive().default(1_600),
    capabilities: z
      .object({
        tools: z.boolean().optional(),
        vision: z.boolean().optional(),
        reasoning: z.boolean().optional(),
        structured_output: z.boolean().optional(),
      })
      .strict()
      .default({}),
  })
  .strict()
  .superRefine((value, context) => {
    if (!value.id.endsWith('/*')) {
      if (value.id.includes('*')) context.addIssue({ code: 'custom', path: ['id'], message: 'a wildcard id is <namespace>/*' });
      return;
    }
    for (const field of ['upstream', 'price'] as const) {
      if (value[field] !== undefined)
        context.addIssue({
          code: 'custom',
          path: [field],
          message: 'not allowed on a wildcard model: each model is its own upstream, priced by the catalog',
        });
    }
  })
  .transform((value): ModelEntry => value);

const ALIAS_REASONING: Record<string, ReasoningEffort> = { 'svc/fast': 'low', 'svc/balanced': 'medium', 'svc/best': 'xhigh' };

const alias = z
  .object({
    candidates: z.array(z.string()).min(1),
    /** Default: the contract's level for the svc/* aliases, medium for others. */
    reasoning: reasoningEffort.optional(),
    /** Automatic prompt-cache breakpoints for this alias; default: `prompt_caching.automatic`. */
    prompt_caching: z.boolean().optional(),
  })
  .strict();

const promptCaching = z
  .object({
    /** Breakpoints placed by the gateway on Anthropic-kind requests that mark none. */
    automatic: z.boolean().default(true),
    /** Per key (its id or display prefix): overrides the alias's and the default. */
    keys: z.record(z.string().min(1), z.boolean()).default({}),
  })
  .strict()
  .default({});

const modelRule = z
  .object({
    /** A name as a tool sends it: exact, or a glob (`*` any characters, `?` one). */
    match: z.string().min(1),
    /** The alias or model id it is served as. */
    to: z.string().min(1),
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
        /** On SIGTERM, how long /ready answers 503 while requests are still accepted and served, before the listener closes. */
        ready_grace_ms: z.number().int().nonnegative().default(0),
        /** A client must send a request's headers within this long (from the connection or the last answer); else 408 and the connection closes. */
        headers_timeout_ms: z.number().int().positive().default(30_000),
        /** A client must send a whole request, body included, within this long; else 408 and the connection closes. */
        request_timeout_ms: z.number().int().positive().default(120_000),
      })
      .strict()
      .refine((server) => server.headers_timeout_ms <= server.request_timeout_ms, {
        message: 'headers_timeout_ms must not be more than request_timeout_ms',
        path: ['headers_timeout_ms'],
      })
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
        /** Without a port of its own: serve it on the public port even when server.host is not a loopback address. */
        public: z.boolean().default(false),
        /** A key_prefix label on tokens, cost and rate-limit metrics (one series per key). */
        per_key: z.boolean().default(false),
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
    aliases: z.record(z.string().regex(/^[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._-]*$/, 'must look like team/name'), alias),
    /** Names tools send mapped to an alias or a model id; first match wins. */
    model_rules: z.array(modelRule).default([]),
    prompt_caching: promptCaching,
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
    });
    for (const chain of Object.keys(config.console.rpcUrls)) {
      if (!config.console.chainIds.includes(Number(chain))) {
        context.addIssue({ code: 'custom', path: ['console', 'rpc_url', chain], message: `chain ${chain} is not in console.chain_ids` });
      }
    }
    for (const name of CONTRACT_ALIASES) {
      if (!config.aliases[name]) context.addIssue({ code: 'custom', path: ['aliases', name], message: 'required: the API names it' });
    }
    // Names a wildcard entry covers are resolved (and may be refused) once the rest is valid.
    const namespaces = config.models.filter((entry) => entry.id.endsWith('/*')).map((entry) => entry.id.slice(0, -1));
    const known = (id: string) => modelIds.has(id) || namespaces.some((namespace) => id.length > namespace.length && id.startsWith(namespace));
    for (const [name, entry] of Object.entries(config.aliases)) {
      if (modelIds.has(name)) context.addIssue({ code: 'custom', path: ['aliases', name], message: `${name} is also a model id` });
      entry.candidates.forEach((candidate, index) => {
        if (!known(candidate))
          context.addIssue({ code: 'custom', path: ['aliases', name, 'candidates', index], message: `unknown model ${candidate}` });
      });
    }
  })
  .transform((config, context) => {
    const resolved = resolveConfiguredModels(config.providers, config.models, config.aliases, config.model_rules);
    for (const issue of resolved.issues) context.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    const aliases: Record<string, AliasConfig> = {};
    for (const [name, entry] of Object.entries(config.aliases)) {
      const resolvedAlias: AliasConfig = { candidates: entry.candidates, reasoning: entry.reasoning ?? ALIAS_REASONING[name] ?? 'medium' };
      if (entry.prompt_caching !== undefined) resolvedAlias.promptCaching = entry.prompt_caching;
      aliases[name] = resolvedAlias;
    }
    return {
      server: config.server,
      database: config.database,
      limits: config.limits,
      logging: config.logging,
      metrics: config.metrics,
      health: config.health,
      console: config.console,
      providers: config.providers,
      models: resolved.models,
      wildcards: resolved.wildcards,
      aliases: aliases as Record<AliasName, AliasConfig> & Record<string, AliasConfig>,
      modelRules: resolved.rules,
      promptCaching: config.prompt_caching,
      /** Configured prices that differ from the catalog's, logged at start. */
      catalogWarnings: resolved.warnings,
    };
  });

interface AliasConfig {
  candidates: string[];
  reasoning: ReasoningEffort;
  /** Automatic prompt caching for this alias, when set. */
  promptCaching?: boolean;
}

export type GatewayConfig = z.output<typeof configSchema>;
export type ProviderConfig = GatewayConfig['providers'][number];
export type { ModelConfig };
/** The aliases the contract names; a config may add its own. */
export type AliasName = (typeof CONTRACT_ALIASES)[number];
export type SimulatedScriptEntry = z.output<typeof simulatedScriptEntry>;
