import type { GatewayConfig } from '../config/schema.ts';
import type { ApiKeyRecord } from '../storage/records.ts';

/**
 * Whether the gateway places prompt-cache breakpoints on a request of `key` served through
 * `alias` (place-cache-breakpoints.ts): the key's own setting (by id or display prefix), else the
 * alias's, else `prompt_caching.automatic`.
 */
export function automaticCachingFor(
  config: Pick<GatewayConfig, 'promptCaching' | 'aliases'>,
  key: Pick<ApiKeyRecord, 'id' | 'prefix'>,
  alias: string | undefined,
): boolean {
  const keys = config.promptCaching.keys;
  return keys[key.id] ?? keys[key.prefix] ?? (alias ? config.aliases[alias]?.promptCaching : undefined) ?? config.promptCaching.automatic;
}
