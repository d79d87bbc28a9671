import { newKeyId } from '../lib/ids.ts';
import type { ApiKeyRecord, Scope } from '../storage/records.ts';
import type { KeyStore } from '../storage/key-store.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import { displayPrefix, hashApiKey, mintApiKey } from './api-key-format.ts';

export interface KeyOptions {
  name?: string;
  scopes?: Scope[];
  /** Allowed aliases or model ids; null (the default) allows every model. */
  models?: string[] | null;
  dailyLimitNano?: number | null;
  rateLimitPerMinute?: number | null;
  expiresAt?: string | null;
  accountId?: string;
  now?: Date;
  /** Who creates it, for the audit log (`cli`, a wallet address); absent: not audit-logged (tests, fixtures). */
  actor?: string;
}

/** Mint a key and store only its hash and display prefix. The returned key is the only copy. */
export async function issueApiKey(store: KeyStore, options: KeyOptions = {}): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = mintApiKey();
  const record: ApiKeyRecord = {
    id: newKeyId(),
    accountId: options.accountId ?? DEFAULT_ACCOUNT_ID,
    name: options.name ?? 'unnamed',
    prefix: displayPrefix(key),
    hash: hashApiKey(key),
    scopes: options.scopes ?? ['inference'],
    models: options.models ?? null,
    dailyLimitNano: options.dailyLimitNano ?? null,
    rateLimitPerMinute: options.rateLimitPerMinute ?? null,
    expiresAt: options.expiresAt ?? null,
    revokedAt: null,
    createdAt: (options.now ?? new Date()).toISOString(),
    lastUsedAt: null,
  };
  await store.insertKey(record, options.actor);
  return { key, record };
}
