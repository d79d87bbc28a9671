import type { ApiKeyRecord } from './records.ts';

/** API keys: what authentication, the CLI and the console read and write. */
export interface KeyStore {
  /** Inserts the key and, when `actor` is given, the audit entry `key.created` in the same transaction. */
  insertKey(key: ApiKeyRecord, actor?: string): Promise<void>;
  /**
   * Change a key's name, allowed models (null: every model), daily limit and/or rate limit (a
   * field absent is left as it is; null removes a limit) and write one audit entry, `key.limits`
   * when only limits changed, else `key.updated`, with the values before the change, in one
   * transaction. Null when no such key.
   */
  updateKeyLimits(
    accountId: string,
    keyId: string,
    changes: { name?: string; models?: string[] | null; dailyLimitNano?: number | null; rateLimitPerMinute?: number | null },
    actor: string,
    at: string,
  ): Promise<ApiKeyRecord | null>;
  findKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** Newest first. */
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Revoke by key id or display prefix; writes the audit entry in the same transaction. Null when no such active key. */
  revokeKey(accountId: string, idOrPrefix: string, at: string, actor: string): Promise<ApiKeyRecord | null>;
  /**
   * A value that changes whenever another process may have changed keys. Cheap enough to call
   * on every request (no network round trip); the key cache is dropped when it changes.
   */
  keysChangeToken(): Promise<number>;
}
