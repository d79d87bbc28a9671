import { keyAllowsModel, requireModelAllowed } from '../auth/key-authenticator.ts';
import type { ApiKeyRecord } from '../storage/records.ts';
import type { ModelCatalog } from './model-catalog.ts';

/**
 * The allow-list check of a requested name: the name sent, or what a model-name rule serves it
 * as (a key allowing svc/balanced may send claude-sonnet-4-5-20250929 when `claude-*` maps
 * there), or the wildcard entry it comes through (a key allowing openai/* may send any
 * openai/ model). A name the key does not list and the gateway does not know is model_not_allowed.
 */
export function requireRequestAllowed(catalog: ModelCatalog, key: ApiKeyRecord, requested: string): void {
  if (keyAllowsModel(key, requested)) return;
  let names: string[] = [];
  try {
    names = catalog.route(requested).names;
  } catch {
    // Unknown to the gateway as well: refused as not allowed, as a name the key does not list.
  }
  if (!names.some((name) => keyAllowsModel(key, name))) requireModelAllowed(key, requested);
}
