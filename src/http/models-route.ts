import type { FastifyInstance } from 'fastify';
import { keyAllowsModel } from '../auth/key-authenticator.ts';
import type { ModelConfig } from '../config/schema.ts';
import { formatUsd } from '../lib/money.ts';
import type { GatewayDeps } from './gateway-deps.ts';
import { authenticatedKey } from './request-context.ts';

function pricing(price: ModelConfig['price']) {
  return {
    unit: 'USD per 1M tokens',
    input: formatUsd(price.inputNanoPerMillion),
    cached_input: formatUsd(price.cachedInputNanoPerMillion),
    cache_write: formatUsd(price.cacheWriteNanoPerMillion),
    output: formatUsd(price.outputNanoPerMillion),
  };
}

function modelEntry(model: ModelConfig, created: number) {
  return {
    id: model.id,
    object: 'model',
    created,
    owned_by: model.provider,
    type: 'model',
    pricing: pricing(model.price),
    context_window: model.contextWindow,
    max_output_tokens: model.maxOutputTokens,
    capabilities: model.capabilities,
  };
}

/** Most any candidate of an alias may charge per token kind: what a request through it can cost at worst. */
function highestPrices(models: ModelConfig[]): ModelConfig['price'] {
  const highest = (pick: (model: ModelConfig) => number) => Math.max(...models.map(pick));
  return {
    inputNanoPerMillion: highest((model) => model.price.inputNanoPerMillion),
    cachedInputNanoPerMillion: highest((model) => model.price.cachedInputNanoPerMillion),
    cacheWriteNanoPerMillion: highest((model) => model.price.cacheWriteNanoPerMillion),
    outputNanoPerMillion: highest((model) => model.price.outputNanoPerMillion),
  };
}

export function registerModelsRoute(app: FastifyInstance, deps: GatewayDeps): void {
  const created = Math.floor(Date.now() / 1000);
  app.get('/v1/models', async (request) => {
    const key = authenticatedKey(request);
    const data: unknown[] = [];
    for (const alias of deps.catalog.aliases.values()) {
      if (!keyAllowsModel(key, alias.name)) continue;
      data.push({
        id: alias.name,
        object: 'model',
        created,
        owned_by: 'gateway',
        type: 'alias',
        candidates: alias.candidates.map((model) => model.id),
        default_reasoning_effort: alias.reasoning,
        pricing: { ...pricing(highestPrices(alias.candidates)), note: 'highest price among the candidates' },
      });
    }
    for (const model of deps.catalog.models.values()) {
      if (keyAllowsModel(key, model.id)) data.push(modelEntry(model, created));
    }
    return { object: 'list', data };
  });
}
