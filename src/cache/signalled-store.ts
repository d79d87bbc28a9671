import type { Store } from '../storage/store.ts';
import type { KeyChangeSignal } from './key-change-signal.ts';

/**
 * The store, announcing every change of keys or alias rules on `signal` once it is committed, so
 * every gateway process drops its cached keys and reads the rules again on its next request.
 * Used by the server and the CLI alike.
 */
export function withKeyChangeSignal(store: Store, signal: KeyChangeSignal): Store {
  return {
    ...store,
    async insertKey(key, actor) {
      await store.insertKey(key, actor);
      await signal.bump();
    },
    async updateKeyLimits(accountId, keyId, changes, actor, at) {
      const updated = await store.updateKeyLimits(accountId, keyId, changes, actor, at);
      if (updated) await signal.bump();
      return updated;
    },
    async setAliasRule(accountId, rule) {
      await store.setAliasRule(accountId, rule);
      await signal.bump();
    },
    async revokeKey(accountId, idOrPrefix, at, actor) {
      const revoked = await store.revokeKey(accountId, idOrPrefix, at, actor);
      if (revoked) await signal.bump();
      return revoked;
    },
  };
}

/**
 * The version the key cache follows with Redis: the signal (one GET per request, immediate)
 * joined with the store's own change token read at most every `backstopMs`, so a key changed
 * by a tool that did not bump the signal is still noticed within that time.
 */
export function keyChangeVersion(signal: KeyChangeSignal, store: Store, backstopMs = 1_000): () => Promise<string> {
  let storeToken = '';
  let readAt = 0;
  return async () => {
    const now = Date.now();
    if (now - readAt >= backstopMs) {
      readAt = now;
      storeToken = String(await store.keysChangeToken());
    }
    return `${await signal.current()}/${storeToken}`;
  };
}
