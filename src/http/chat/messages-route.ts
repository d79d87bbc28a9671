import type { FastifyInstance } from 'fastify';
import { requireScope } from '../../auth/key-authenticator.ts';
import { requireRequestAllowed } from '../../routing/requested-model.ts';
import { PromptMeasure } from '../../tokens/token-estimate.ts';
import type { ModelConfig } from '../../config/schema.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseBetas, parseMessagesRequest } from '../../formats/anthropic-messages/parse-messages-request.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import { chatHandler } from './chat-pipeline.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { authenticatedKey } from '../request-context.ts';
import { anthropicMessagesWire } from '../../formats/anthropic-messages/anthropic-messages-wire.ts';

/** The model a count is made for: the model itself, or an alias's first candidate. */
function firstCandidate(catalog: ModelCatalog, requested: string): ModelConfig {
  const { alias, model } = catalog.route(requested);
  return alias ? alias.candidates[0]! : model!;
}

/**
 * The Anthropic Messages API, for Claude Code and the Anthropic SDKs: POST /v1/messages, served
 * like a chat completion by any candidate, in its metered /v1 scope (v1-api.ts). Claude Code adds
 * `?beta=true`, which needs nothing here.
 */
export function registerMessagesRoute(scope: FastifyInstance, deps: GatewayDeps): void {
  scope.post('/messages', { config: { wire: 'anthropic' } }, chatHandler(deps, anthropicMessagesWire));
}

/** POST /v1/messages/count_tokens: a free estimate (Claude Code's /context), no provider call, so no receipt and no rate limit. */
export function registerCountTokensRoute(scope: FastifyInstance, deps: GatewayDeps): void {
  scope.post('/messages/count_tokens', { config: { wire: 'anthropic' } }, async (request) => {
    const key = authenticatedKey(request);
    requireScope(key, 'inference');
    const parsed = parseMessagesRequest(request.body, { betas: parseBetas(request.headers['anthropic-beta']) });
    requireRequestAllowed(deps.catalog, key, parsed.model);
    const model = firstCandidate(deps.catalog, parsed.model);
    // Counting is bounded by the context window: a larger prompt is refused on a bound.
    const prompt = new PromptMeasure(parsed.request);
    const fit = await prompt.fits(model, model.contextWindow);
    if (!fit.fits) {
      throw new GatewayError(
        'context_too_large',
        `The prompt counts at least ${fit.tokens} tokens; ${model.id} has a context window of ${model.contextWindow}.`,
      );
    }
    return { input_tokens: await prompt.fairCount(model) };
  });
}
