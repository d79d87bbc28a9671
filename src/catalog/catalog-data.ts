import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Provider } from '@pydantic/genai-prices';

/**
 * The built-in catalog's data: @pydantic/genai-prices' providers the gateway reads (price-catalog.ts).
 * The compiled build carries them as JSON beside its bundle (scripts/bundle-server.mjs writes it
 * with `catalogSnapshot`): parsing that takes about 2.5 MiB of memory where loading the package's
 * 830 KB module takes about 15, in a process whose idle size is some 75. From the sources, the
 * package is read itself.
 */
export const CATALOG_DATA_FILE = 'catalog-data.json';

let providers: Provider[] | undefined;

/** The providers, in the package's order, read once. */
export function catalogProviders(): Provider[] {
  if (providers) return providers;
  const snapshot = new URL(CATALOG_DATA_FILE, import.meta.url);
  providers = existsSync(snapshot) ? (JSON.parse(readFileSync(snapshot, 'utf8')) as Provider[]) : catalogSnapshot();
  return providers;
}

/** The catalog provider with this id. */
export function catalogProvider(id: string): Provider | undefined {
  return catalogProviders().find((provider) => provider.id === id);
}

/**
 * From the package: `vendors` and every provider they fall back to, in the package's order of
 * discovery (what the build writes, and what the sources read).
 */
export function catalogSnapshot(vendors: readonly string[] = CATALOG_VENDORS): Provider[] {
  const { findProvider } = createRequire(import.meta.url)('@pydantic/genai-prices') as typeof import('@pydantic/genai-prices');
  const found: Provider[] = [];
  const pending = [...vendors];
  while (pending.length > 0) {
    const provider = findProvider({ providerId: pending.shift()! });
    if (!provider || found.some((known) => known.id === provider.id)) continue;
    found.push(provider);
    pending.push(...(provider.fallback_model_providers ?? []));
  }
  return found;
}

/** Vendors the catalog knows, the values `providers[].catalog` takes besides `none`. */
export const CATALOG_VENDORS = [
  'openai',
  'anthropic',
  'google',
  'groq',
  'deepseek',
  'openrouter',
  'mistral',
  'x-ai',
  'together',
  'fireworks',
  'azure',
  'aws',
  'cohere',
  'perplexity',
  'novita',
] as const;
