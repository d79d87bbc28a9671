/**
 * Key change signal: tells every gateway process that API keys changed somewhere (a revocation,
 * a new key, a changed limit), so each drops its in-memory key cache before serving the next
 * request with it. Many processes share one in Redis (redis-key-change-signal.ts); the embedded
 * mode uses the store's own change token.
 */
export interface KeyChangeSignal {
  /**
   * The keys version now. It is read after the call starts, so every `bump` that finished before
   * is seen. Versions are compared for equality only: any change means "drop the cache".
   */
  current(): Promise<string>;
  /** Announce that keys changed. Call it after the database commit, and treat a failure as the change not being announced. */
  bump(): Promise<void>;
}

/** The one store method the embedded signal reads (the Store port has it). */
export interface KeysChangeTokenSource {
  keysChangeToken(): Promise<number>;
}

/**
 * One process (the embedded mode): the store's change token says when another process (the CLI)
 * committed key changes; a local counter covers this process's own changes, which the token
 * deliberately ignores (SQLite's data_version only moves for other connections' commits).
 */
export function createLocalKeyChangeSignal(store: KeysChangeTokenSource): KeyChangeSignal {
  let localChanges = 0;
  return {
    async current() {
      return `${await store.keysChangeToken()}.${localChanges}`;
    },
    async bump() {
      localChanges += 1;
    },
  };
}
