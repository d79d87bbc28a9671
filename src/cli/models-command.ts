import type { GatewayConfig, ModelConfig } from '../config/schema.ts';
import type { ValueSource } from '../catalog/resolve-model.ts';
import type { AppliedPrices } from '../storage/records.ts';
import { formatUsd } from '../lib/money.ts';
import type { CommandContext } from './command-context.ts';
import { displayUsd, formatTable } from './format.ts';

/** What `gateway models` needs: the config alone, no database and no provider. */
export type ConfigContext = Pick<CommandContext, 'config' | 'options' | 'args' | 'print'>;

const usd = (nano: number) => formatUsd(nano).replace(/(\.\d*?[1-9])0+$|\.0+$/, '$1');

function pricesJson(price: AppliedPrices) {
  return {
    input: usd(price.inputNanoPerMillion),
    cached_input: usd(price.cachedInputNanoPerMillion),
    cache_write: usd(price.cacheWriteNanoPerMillion),
    output: usd(price.outputNanoPerMillion),
  };
}

function modelJson(model: ModelConfig) {
  const { sources } = model;
  const value = <T>(of: T, source: ValueSource) => ({ value: of, source });
  return {
    id: model.id,
    provider: model.provider,
    upstream: model.upstream,
    catalog_id: model.catalogId ?? null,
    price: {
      unit: 'USD per 1M tokens',
      ...pricesJson(model.price),
      tiers: model.priceTiers.map((tier) => ({ above_input_tokens: tier.aboveInputTokens, ...pricesJson(tier.price) })),
      source: sources.price,
    },
    context_window: value(model.contextWindow, sources.context_window),
    max_output_tokens: value(model.maxOutputTokens, sources.max_output_tokens),
    capabilities: {
      tools: value(model.capabilities.tools, sources.tools),
      vision: value(model.capabilities.vision, sources.vision),
      reasoning: value(model.capabilities.reasoning, sources.reasoning),
    },
  };
}

/** `*` after a value the config sets (over the catalog), `?` after a default neither gives. */
const mark = (source: ValueSource) => (source === 'config' ? '*' : source === 'default' ? '?' : '');

function priceCells(price: AppliedPrices, source: ValueSource): string[] {
  const suffix = mark(source);
  return [price.inputNanoPerMillion, price.cachedInputNanoPerMillion, price.cacheWriteNanoPerMillion, price.outputNanoPerMillion].map(
    (nano) => displayUsd(nano) + suffix,
  );
}

/** `tools vision -reasoning`: each capability, a leading - when the model lacks it, marked by its source. */
function capabilityCell(model: ModelConfig): string {
  return (['tools', 'vision', 'reasoning'] as const)
    .map((name) => (model.capabilities[name] ? '' : '-') + name + mark(model.sources[name]))
    .join(' ');
}

function modelsText(config: GatewayConfig): string {
  const rows: string[][] = [];
  for (const model of config.models) {
    rows.push([
      model.id,
      model.provider,
      model.upstream,
      ...priceCells(model.price, model.sources.price),
      String(model.contextWindow) + mark(model.sources.context_window),
      String(model.maxOutputTokens) + mark(model.sources.max_output_tokens),
      capabilityCell(model),
    ]);
    for (const tier of model.priceTiers) {
      rows.push([`  above ${tier.aboveInputTokens} input tokens`, '', '', ...priceCells(tier.price, model.sources.price), '', '', '']);
    }
  }
  const lines = [
    formatTable(['MODEL', 'PROVIDER', 'UPSTREAM', 'INPUT', 'CACHED', 'CACHE WRITE', 'OUTPUT', 'CONTEXT', 'MAX OUTPUT', 'CAPABILITIES'], rows),
    'Prices in USD per 1M tokens. Unmarked: from the built-in catalog; * set in the config; ? a default (neither gives it).',
  ];
  for (const wildcard of config.wildcards) {
    lines.push(
      `${wildcard.id}: any ${wildcard.namespace}<name>, sent to ${wildcard.entry.provider} as <name>, priced by the catalog (${wildcard.provider.catalog})`,
    );
  }
  lines.push(
    '',
    formatTable(
      ['ALIAS', 'REASONING', 'CANDIDATES'],
      Object.entries(config.aliases).map(([name, alias]) => [name, alias.reasoning, alias.candidates.join(', ')]),
    ),
  );
  if (config.modelRules.length)
    lines.push(
      '',
      formatTable(
        ['NAME SENT', 'SERVED AS'],
        config.modelRules.map((rule) => [rule.match, rule.to]),
      ),
    );
  for (const warning of config.catalogWarnings) lines.push(`warning: ${warning}`);
  return lines.join('\n');
}

/** `gateway models [--json]`: what the config resolves to, each value marked from the catalog or the config. */
export async function showModels(context: ConfigContext): Promise<void> {
  const { config } = context;
  if (!context.options.json) {
    context.print(modelsText(config));
    return;
  }
  const json = {
    models: config.models.map(modelJson),
    wildcards: config.wildcards.map((wildcard) => ({ id: wildcard.id, provider: wildcard.entry.provider, catalog: wildcard.provider.catalog })),
    aliases: Object.entries(config.aliases).map(([name, alias]) => ({ name, candidates: alias.candidates, reasoning: alias.reasoning })),
    model_rules: config.modelRules.map((rule) => ({ match: rule.match, to: rule.to })),
    warnings: config.catalogWarnings,
  };
  context.print(JSON.stringify(json, null, 2));
}
