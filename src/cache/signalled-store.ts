import type { Store } from '../storage/store.ts';
import type { KeyChangeSignal } from './key-change-signal.ts';

/**
 * The store, announcing every key change on `signal` once it is committed, so every gateway
 * process drops its cached keys on its next request. Used by the server and the CLI alike.
 */
export function withKeyChangeSignal(store: Store, signal: KeyChangeSignal): Store {
  return {
    ...store,
    async insertKey(key) {
      await store.insertKey(key);
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
