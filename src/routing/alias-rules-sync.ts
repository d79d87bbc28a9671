import type { ConsoleStore } from '../storage/console-store.ts';
import type { ModelCatalog } from './model-catalog.ts';

/**
 * Keeps the catalog's aliases on the console's rules. Rule changes are announced on the same
 * change signal as keys, whose version every request already reads; when it moves, the rules
 * are read again (once, however many requests see the new version at the same time).
 */
export class AliasRulesSync {
  private loadedFor: string | undefined;
  private loading: { version: string; done: Promise<void> } | null = null;

  constructor(
    private readonly store: ConsoleStore,
    private readonly catalog: ModelCatalog,
    private readonly accountId: string,
  ) {}

  /** Apply the rules as of `version` (the keys/rules change version); free when it has not moved. */
  sync(version: string | undefined): Promise<void> {
    if (version === undefined || version === this.loadedFor) return Promise.resolve();
    if (this.loading?.version === version) return this.loading.done;
    // A read that began before this version may miss its change: read again after it.
    const before = this.loading?.done.catch(() => {}) ?? Promise.resolve();
    const done = before
      .then(() => this.store.listAliasRules(this.accountId))
      .then((rules) => {
        this.catalog.applyRules(rules);
        this.loadedFor = version;
      })
      .finally(() => {
        if (this.loading?.done === done) this.loading = null;
      });
    this.loading = { version, done };
    return done;
  }
}
