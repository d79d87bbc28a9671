import type { FastifyInstance } from 'fastify';
import { keyAllowsModel } from '../auth/key-authenticator.ts';
import type { ModelConfig } from '../config/schema.ts';
import { wildcardFor } from '../catalog/configured-models.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { formatUsd } from '../lib/money.ts';
import type { GatewayDeps } from './gateway-deps.ts';
import { authenticatedKey } from './request-context.ts';
import {
  modelListQuerySchema,
  type AliasEntry,
  type AnthropicModelList,
  type ModelEntry,
  type ModelList,
  type WildcardEntry,
} from './model-list-schema.ts';

function pricing(price: ModelConfig['price']) {
  const unit = 'USD per 1M tokens' as const;
  return {
    unit,
    input: formatUsd(price.inputNanoPerMillion),
    cached_input: formatUsd(price.cachedInputNanoPerMillion),
    cache_write: formatUsd(price.cacheWriteNanoPerMillion),
    output: formatUsd(price.outputNanoPerMillion),
  };
}

function modelPricing(model: ModelConfig): ModelEntry['pricing'] {
  const base: ModelEntry['pricing'] = pricing(model.price);
  if (model.priceTiers.length) {
    base.tiers = model.priceTiers.map((tier) => ({
      above_input_tokens: tier.aboveInputTokens,
      input: formatUsd(tier.price.inputNanoPerMillion),
      cached_input: formatUsd(tier.price.cachedInputNanoPerMillion),
      cache_write: formatUsd(tier.price.cacheWriteNanoPerMillion),
      output: formatUsd(tier.price.outputNanoPerMillion),
    }));
  }
  return base;
}

function modelEntry(model: ModelConfig, created: number): ModelEntry {
  return {
    id: model.id,
    object: 'model',
    created,
    owned_by: model.provider,
    type: 'model',
    pricing: modelPricing(model),
    context_window: model.contextWindow,
    max_output_tokens: model.maxOutputTokens,
    capabilities: model.capabilities,
  };
}

/** Most any candidate of an alias may charge per token kind, at any tier: what a request through it can cost at worst. */
function highestPrices(models: ModelConfig[]): ModelConfig['price'] {
  const prices = models.flatMap((model) => [model.price, ...model.priceTiers.map((tier) => tier.price)]);
  const highest = (pick: (price: ModelConfig['price']) => number) => Math.max(...prices.map(pick));
  return {
    inputNanoPerMillion: highest((price) => price.inputNanoPerMillion),
    cachedInputNanoPerMillion: highest((price) => price.cachedInputNanoPerMillion),
    cacheWriteNanoPerMillion: highest((price) => price.cacheWriteNanoPerMillion),
    outputNanoPerMillion: highest((price) => price.outputNanoPerMillion),
  };
}

/** Anthropic's page size: 20 unless asked, 1 to 1000. */
function anthropicLimit(value: unknown): number {
  const parsed = modelListQuerySchema.shape.limit.safeParse(value);
  if (!parsed.success) throw new GatewayError('invalid_request', 'limit must be an integer from 1 to 1000');
  return parsed.data ?? 20;
}

/**
 * The listing as Anthropic clients read it (Claude Code's model discovery), paged like
 * https://docs.anthropic.com/en/api/models-list with limit, after_id and before_id.
 */
function anthropicModelList(
  entries: Array<{ id: string; display_name: string }>,
  createdAt: string,
  query: Record<string, unknown>,
): AnthropicModelList {
  const limit = anthropicLimit(query.limit);
  const position = (field: string): number | undefined => {
    const id = query[field];
    if (id === undefined) return undefined;
    const index = entries.findIndex((entry) => entry.id === id);
    if (index === -1) throw new GatewayError('invalid_request', `${field} names no model in the list`);
    return index;
  };
  const after = position('after_id');
  const before = position('before_id');
  let page: typeof entries;
  let hasMore: boolean;
  if (before !== undefined) {
    page = entries.slice(Math.max(0, before - limit), before);
    hasMore = before - limit > 0;
  } else {
    const from = after === undefined ? 0 : after + 1;
    page = entries.slice(from, from + limit);
    hasMore = from + limit < entries.length;
  }
  return {
    data: page.map((entry) => ({ type: 'model', id: entry.id, display_name: entry.display_name, created_at: createdAt })),
    has_more: hasMore,
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
  };
}

export function registerModelsRoute(app: FastifyInstance, deps: GatewayDeps): void {
  const created = Math.floor(Date.now() / 1000);
  app.get('/models', async (request): Promise<ModelList | AnthropicModelList> => {
    const key = authenticatedKey(request);
    // A key allowing openai/* may use every openai/ model, the configured ones too.
    const allowsModel = (id: string) => keyAllowsModel(key, id) || keyAllowsModel(key, wildcardFor(deps.catalog.wildcards, id)?.id ?? id);
    if (request.headers['anthropic-version'] !== undefined) {
      const entries = [
        ...[...deps.catalog.aliases.values()]
          .filter((alias) => keyAllowsModel(key, alias.name))
          .map((alias) => ({ id: alias.name, display_name: `${alias.name} (${alias.candidates.map((model) => model.id).join(', ')})` })),
        ...[...deps.catalog.models.values()].filter((model) => allowsModel(model.id)).map((model) => ({ id: model.id, display_name: model.id })),
        ...deps.catalog.wildcards
          .filter((wildcard) => keyAllowsModel(key, wildcard.id))
          .map((wildcard) => ({ id: wildcard.id, display_name: `${wildcard.id} (any ${wildcard.namespace}<name> the catalog prices)` })),
      ];
      return anthropicModelList(entries, new Date(created * 1000).toISOString(), request.query as Record<string, unknown>);
    }
    const data: Array<AliasEntry | ModelEntry | WildcardEntry> = [];
    for (const alias of deps.catalog.aliases.values()) {
      if (!keyAllowsModel(key, alias.name)) continue;
      const entry: AliasEntry = {
        id: alias.name,
        object: 'model',
        created,
        owned_by: 'gateway',
        type: 'alias',
        candidates: alias.candidates.map((model) => model.id),
        default_reasoning_effort: alias.reasoning,
        pricing: { ...pricing(highestPrices(alias.candidates)), note: 'highest price among the candidates' },
      };
      data.push(entry);
    }
    for (const model of deps.catalog.models.values()) {
      if (allowsModel(model.id)) data.push(modelEntry(model, created));
    }
    for (const wildcard of deps.catalog.wildcards) {
      if (!keyAllowsModel(key, wildcard.id)) continue;
      const entry: WildcardEntry = {
        id: wildcard.id,
        object: 'model',
        created,
        owned_by: wildcard.entry.provider,
        type: 'wildcard',
        description: `any ${wildcard.namespace}<name>, sent to ${wildcard.entry.provider} as <name>, priced by the built-in catalog (${wildcard.provider.catalog}); a name it has no price for is unsupported_model`,
      };
      data.push(entry);
    }
    return { object: 'list', data };
  });
}
