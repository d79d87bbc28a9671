import type { MatchLogic, ModelInfo, ModelPrice, Provider } from '@pydantic/genai-prices';
import { CATALOG_VENDORS, catalogProvider, catalogProviders } from './catalog-data.ts';
import type { AppliedPrices } from '../storage/records.ts';
import { nanoPerMillionOf } from './exact-price.ts';

/**
 * The built-in catalog: @pydantic/genai-prices' data (prices per provider, cache read and write
 * prices, tiers by prompt size, context windows), read as data. Its own arithmetic is floating
 * point and never used: every price becomes exact integer nano-USD here (exact-price.ts).
 */

/** Prices from this many prompt tokens up (exclusive: a prompt of exactly that size pays the tier below). */
export interface PriceTier {
  aboveInputTokens: number;
  price: AppliedPrices;
}

export interface CatalogModel {
  /** `vendor:model`, the catalog entry that matched. */
  catalogId: string;
  /** Prices up to the first tier; null when the catalog has no input and output price for the model. */
  price: AppliedPrices | null;
  /** Higher prices for larger prompts, ascending. */
  tiers: PriceTier[];
  contextWindow?: number;
}

/** The catalog vendor whose API lives at `baseUrl` (api.groq.com -> groq), if one does. */
export function vendorOfBaseUrl(baseUrl: string): string | undefined {
  if (!baseUrl) return undefined;
  // As the package matches a URL to a provider: its api_pattern at the start.
  const id = catalogProviders().find((provider) => new RegExp(`^(?:${provider.api_pattern})`).test(baseUrl))?.id;
  return id && (CATALOG_VENDORS as readonly string[]).includes(id) ? id : undefined;
}

function matches(logic: MatchLogic, name: string): boolean {
  const lower = name.toLowerCase();
  if ('or' in logic) return logic.or.some((entry) => matches(entry, name));
  if ('and' in logic) return logic.and.every((entry) => matches(entry, name));
  if ('equals' in logic) return lower === logic.equals.toLowerCase();
  if ('starts_with' in logic) return lower.startsWith(logic.starts_with.toLowerCase());
  if ('ends_with' in logic) return lower.endsWith(logic.ends_with.toLowerCase());
  if ('contains' in logic) return lower.includes(logic.contains.toLowerCase());
  return new RegExp(logic.regex).test(name);
}

/** claude-3-5-sonnet-20241022 is also looked for as claude-3-5-sonnet-2024-10-22, as the catalog does. */
function withDashedDate(name: string): string {
  return name.replace(/-(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)/g, '-$1-$2-$3');
}

function findModel(provider: Provider, name: string, seen = new Set<string>()): { provider: Provider; model: ModelInfo } | undefined {
  seen.add(provider.id);
  const model = provider.models.find((entry) => matches(entry.match, name));
  if (model) return { provider, model };
  for (const id of provider.fallback_model_providers ?? []) {
    const fallback = seen.has(id) ? undefined : catalogProvider(id);
    const found = fallback && findModel(fallback, name, seen);
    if (found) return found;
  }
  return undefined;
}

/**
 * The prices in force at `at`: the latest dated price that has started. Prices for hours of the
 * day (off-peak discounts) are never chosen: a request is billed the regular price at any hour.
 */
function pricesAt(model: ModelInfo, at: Date): ModelPrice {
  if (!Array.isArray(model.prices)) return model.prices;
  for (let index = model.prices.length - 1; index >= 0; index--) {
    const entry = model.prices[index]!;
    const constraint = entry.constraint;
    if (constraint === undefined) return entry.prices;
    if (constraint.type === 'start_date' && at >= new Date(constraint.start_date)) return entry.prices;
  }
  return model.prices[0]!.prices;
}

type PriceValue = ModelPrice[string];

/** The USD-per-1M price of `value` for a prompt of `inputTokens`, as the catalog's tiers say. */
function priceAt(value: PriceValue, inputTokens: number): number | undefined {
  if (value === undefined || typeof value === 'number') return value;
  let price = value.base;
  for (const tier of value.tiers) if (inputTokens > tier.start) price = tier.price;
  return price;
}

function appliedAt(prices: ModelPrice, inputTokens: number): AppliedPrices {
  const input = nanoPerMillionOf(priceAt(prices.input_mtok, inputTokens)!);
  const cachedInput = priceAt(prices.cache_read_mtok, inputTokens);
  const cacheWrite = priceAt(prices.cache_write_mtok, inputTokens);
  return {
    inputNanoPerMillion: input,
    cachedInputNanoPerMillion: cachedInput === undefined ? input : nanoPerMillionOf(cachedInput),
    cacheWriteNanoPerMillion: cacheWrite === undefined ? input : nanoPerMillionOf(cacheWrite),
    outputNanoPerMillion: nanoPerMillionOf(priceAt(prices.output_mtok, inputTokens)!),
  };
}

const tokenPriceKeys = ['input_mtok', 'cache_read_mtok', 'cache_write_mtok', 'output_mtok'] as const;

function tieredPrices(prices: ModelPrice): { price: AppliedPrices; tiers: PriceTier[] } {
  const starts = new Set<number>();
  for (const key of tokenPriceKeys) {
    const value = prices[key];
    if (typeof value === 'object') for (const tier of value.tiers) starts.add(tier.start);
  }
  const tiers = [...starts].sort((a, b) => a - b).map((start) => ({ aboveInputTokens: start, price: appliedAt(prices, start + 1) }));
  return { price: appliedAt(prices, 0), tiers };
}

/** What the catalog says of `upstream` at `vendor`, or null when it does not list the model. */
export function lookUpCatalogModel(vendor: string, upstream: string, at = new Date()): CatalogModel | null {
  const provider = catalogProvider(vendor);
  if (!provider) return null;
  const found = findModel(provider, upstream) ?? findModel(provider, withDashedDate(upstream));
  if (!found) return null;
  const prices = pricesAt(found.model, at);
  const catalogId = `${found.provider.id}:${found.model.id}`;
  let priced: { price: AppliedPrices | null; tiers: PriceTier[] } = { price: null, tiers: [] };
  if (prices.input_mtok !== undefined && prices.output_mtok !== undefined) {
    try {
      priced = tieredPrices(prices);
    } catch {
      // A price finer than a nano-dollar per 1M tokens: treated as none rather than rounded.
    }
  }
  const entry: CatalogModel = { catalogId, price: priced.price, tiers: priced.tiers };
  if (found.model.context_window) entry.contextWindow = found.model.context_window;
  return entry;
}
