import type { AppliedPrices } from '../storage/records.ts';
import { formatUsd } from '../lib/money.ts';
import { DEFAULT_TRAITS, traitsOf } from './model-traits.ts';
import { lookUpCatalogModel, type PriceTier } from './price-catalog.ts';

/** Where a resolved value came from: the built-in catalog, the config file, or the gateway's default. */
export type ValueSource = 'catalog' | 'config' | 'default';

export interface ModelCapabilities {
  tools: boolean;
  vision: boolean;
  reasoning: boolean;
  /**
   * Answers in a JSON schema natively (OpenAI response_format; Anthropic structured outputs
   * via output_config). Default: true for OpenAI-compatible and simulated providers, false
   * for Anthropic ones, which then get a forced tool instead.
   */
  structured_output?: boolean;
}

/** A model as routing and billing use it: the config entry with what it left out taken from the catalog. */
export interface ModelConfig {
  id: string;
  provider: string;
  upstream: string;
  /** Prices up to the first tier. */
  price: AppliedPrices;
  /** Higher prices for prompts above a size, ascending (Anthropic and Gemini past 200k input tokens). */
  priceTiers: PriceTier[];
  contextWindow: number;
  maxOutputTokens: number;
  /** Most an image can count as input tokens for this model. */
  maxImageTokens: number;
  capabilities: ModelCapabilities;
  /** Where each value came from, for `gateway models`. */
  sources: Record<'price' | 'context_window' | 'max_output_tokens' | 'tools' | 'vision' | 'reasoning', ValueSource>;
  /** The catalog entry that matched (`vendor:model`), if one did. */
  catalogId?: string;
}

/** A model entry as the config file gives it (prices already integer nano-USD). */
export interface ModelEntry {
  id: string;
  provider: string;
  upstream?: string;
  price?: { base: AppliedPrices; tiers: PriceTier[] };
  context_window?: number;
  max_output_tokens?: number;
  max_image_tokens: number;
  capabilities: Partial<ModelCapabilities>;
}

export interface ProviderCatalog {
  kind: string;
  /** The catalog vendor whose prices apply, or `none`. */
  catalog: string;
}

export type Resolution = { model: ModelConfig; warnings: string[] } | { problem: string };

const DEFAULT_CONTEXT_WINDOW = 128_000;

function samePrices(a: AppliedPrices, b: AppliedPrices): boolean {
  return (
    a.inputNanoPerMillion === b.inputNanoPerMillion &&
    a.cachedInputNanoPerMillion === b.cachedInputNanoPerMillion &&
    a.cacheWriteNanoPerMillion === b.cacheWriteNanoPerMillion &&
    a.outputNanoPerMillion === b.outputNanoPerMillion
  );
}

function describePrices(price: AppliedPrices): string {
  const usd = (nano: number) => formatUsd(nano).replace(/0+$/, '').replace(/\.$/, '');
  return `input ${usd(price.inputNanoPerMillion)}, cached_input ${usd(price.cachedInputNanoPerMillion)}, cache_write ${usd(price.cacheWriteNanoPerMillion)}, output ${usd(price.outputNanoPerMillion)}`;
}

/**
 * The model `entry` resolves to: each value the config gives, else the catalog's for the
 * provider's vendor and the upstream name, else a default; a model priced by neither is a problem
 * (nothing is ever free by accident). A configured price that differs from the catalog's is a warning.
 */
export function resolveModel(entry: ModelEntry, provider: ProviderCatalog): Resolution {
  const upstream = entry.upstream ?? entry.id.slice(entry.id.indexOf('/') + 1);
  const found = provider.catalog === 'none' ? null : lookUpCatalogModel(provider.catalog, upstream);
  const traits = traitsOf(upstream);
  const warnings: string[] = [];
  let price: AppliedPrices;
  let priceTiers: PriceTier[];
  if (entry.price) {
    price = entry.price.base;
    priceTiers = entry.price.tiers;
    if (found?.price && !samePrices(price, found.price)) {
      warnings.push(
        `${entry.id}: the configured price (${describePrices(price)}) differs from the catalog's ${found.catalogId} (${describePrices(found.price)})`,
      );
    }
  } else if (found?.price) {
    price = found.price;
    priceTiers = found.tiers;
  } else {
    const where =
      provider.catalog === 'none'
        ? `provider ${entry.provider} uses no catalog`
        : found
          ? `the catalog's ${found.catalogId} has no token price`
          : `the catalog (${provider.catalog}) does not list "${upstream}"`;
    return { problem: `no price is known for ${entry.id}: ${where}; set its price (input and output, USD per 1M tokens)` };
  }
  const sourced = <T>(configured: T | undefined, catalog: T | undefined, fallback: T): [T, ValueSource] =>
    configured !== undefined ? [configured, 'config'] : catalog !== undefined ? [catalog, 'catalog'] : [fallback, 'default'];
  const [contextWindow, contextSource] = sourced(entry.context_window, found?.contextWindow, DEFAULT_CONTEXT_WINDOW);
  const [maxOutput, outputSource] = sourced(entry.max_output_tokens, traits?.maxOutputTokens, DEFAULT_TRAITS.maxOutputTokens);
  if (entry.max_output_tokens !== undefined && maxOutput > contextWindow) {
    return { problem: `${entry.id}: max_output_tokens ${maxOutput} is larger than its context window ${contextWindow}` };
  }
  const [tools, toolsSource] = sourced(entry.capabilities.tools, traits?.tools, DEFAULT_TRAITS.tools);
  const [vision, visionSource] = sourced(entry.capabilities.vision, traits?.vision, DEFAULT_TRAITS.vision);
  const [reasoning, reasoningSource] = sourced(entry.capabilities.reasoning, traits?.reasoning, DEFAULT_TRAITS.reasoning);
  const model: ModelConfig = {
    id: entry.id,
    provider: entry.provider,
    upstream,
    price,
    priceTiers,
    contextWindow,
    // A catalog output limit never passes the window the config narrowed.
    maxOutputTokens: Math.min(maxOutput, contextWindow),
    maxImageTokens: entry.max_image_tokens,
    capabilities: {
      tools,
      vision,
      reasoning,
      structured_output: entry.capabilities.structured_output ?? provider.kind !== 'anthropic',
    },
    sources: {
      price: entry.price ? 'config' : 'catalog',
      context_window: contextSource,
      max_output_tokens: outputSource,
      tools: toolsSource,
      vision: visionSource,
      reasoning: reasoningSource,
    },
  };
  if (found) model.catalogId = found.catalogId;
  return { model, warnings };
}
