import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.ts';
import { formatUsd } from '../../lib/money.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { signedIn } from './console-guard.ts';
import { displayAddress, parseWith } from './console-json.ts';

const ruleRequest = z
  .object({
    alias: z.string(),
    candidates: z.array(z.string()).min(1).max(20),
    reasoning: z.enum(['low', 'medium', 'xhigh']),
  })
  .strict();

/** Rules: the ordered candidates and default reasoning level behind each alias, with every model's prices and capabilities. */
export function registerRulesRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  /** Whether routing skips a model now (cool-down or a probe in progress), why, and until when. */
  const healthOf = (modelId: string) => {
    const [state] = deps.health.states([modelId]);
    const cool = deps.health.board.current(modelId);
    if (!state || state.state === 'up') return { state: 'up' as const, until: null, reason: null };
    return { state: state.state, until: new Date(state.coolUntil).toISOString(), reason: cool?.reason ?? null };
  };
  const view = () => ({
    aliases: [...deps.catalog.aliases.values()].map((alias) => ({
      alias: alias.name,
      candidates: alias.candidates.map((model) => model.id),
      health: Object.fromEntries(alias.candidates.map((model) => [model.id, healthOf(model.id)])),
      reasoning: alias.reasoning,
      source: alias.source,
    })),
    models: [...deps.catalog.models.values()].map((model) => ({
      id: model.id,
      provider: model.provider,
      prices_per_million_tokens: {
        input: formatUsd(model.price.inputNanoPerMillion),
        cached_input: formatUsd(model.price.cachedInputNanoPerMillion),
        cache_write: formatUsd(model.price.cacheWriteNanoPerMillion),
        output: formatUsd(model.price.outputNanoPerMillion),
      },
      context_window: model.contextWindow,
      max_output_tokens: model.maxOutputTokens,
      capabilities: model.capabilities,
    })),
  });

  app.get('/rules', async () => view());

  app.put('/rules', async (request) => {
    const { session, member } = signedIn(request);
    const body = parseWith(ruleRequest, request.body);
    const problem = deps.catalog.ruleProblem(body);
    if (problem) throw new GatewayError('invalid_request', `rule for ${body.alias}: ${problem}`, {}, 'candidates');
    await deps.store.setAliasRule(session.accountId, {
      ...body,
      updatedAt: new Date(deps.now()).toISOString(),
      updatedBy: displayAddress(member.address),
    });
    // This process applies it now; the others on their next request (the change signal moved).
    await deps.rules.sync(await deps.keyVersion());
    return view();
  });
}
