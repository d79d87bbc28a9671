/**
 * A bounded map whose entries are good for one keys version only (see key-change-signal.ts).
 *
 * With an async store, "read the version, clear if it moved, look up, cache" has a race: a
 * request that read the old version may finish its database read after another request saw the
 * new version and cleared the cache, and put back the record from before the change (say, not
 * yet revoked) under the new version, where it would stay. So every value is stored with the
 * version observed before it was read, and dropped unless that is still the current version.
 */
export class VersionedCache<V> {
  private readonly entries = new Map<string, V>();
  private observed: string | undefined;

  constructor(private readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`);
  }

  /** The version the entries are good for (undefined before the first `observe`). */
  get version(): string | undefined {
    return this.observed;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Adopt a version just read from the signal; a different one drops every entry. */
  observe(version: string): void {
    if (version === this.observed) return;
    this.entries.clear();
    this.observed = version;
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  /** Keep `value`, read from the store after `readAt` was observed; ignored when another version was observed since. */
  set(key: string, value: V, readAt: string | undefined): void {
    if (readAt === undefined || readAt !== this.observed) return;
    if (!this.entries.has(key) && this.entries.size >= this.maxEntries) {
      // Map order is insertion order: forget the oldest entry.
      this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, value);
  }

  clear(): void {
    this.entries.clear();
  }
}
