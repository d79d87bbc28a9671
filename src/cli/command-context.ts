import type { GatewayConfig } from '../config/schema.ts';
import type { Store } from '../storage/store.ts';

/** Options a command may receive; which ones each command accepts is checked in run-cli.ts. */
export interface CommandOptions {
  config?: string;
  json?: boolean;
  name?: string;
  scopes?: string;
  models?: string;
  'daily-limit'?: string;
  'rate-limit'?: string;
  expires?: string;
  note?: string;
  key?: string;
  model?: string;
  status?: string;
  since?: string;
  until?: string;
  limit?: string;
  csv?: boolean;
  by?: string;
  role?: string;
  port?: string;
  host?: string;
  url?: string;
  scope?: string;
  write?: boolean;
  'built-in'?: boolean;
}

/** What every command gets; those that open no database (start, check-config) get only this. */
export interface OfflineContext {
  options: CommandOptions;
  /** Arguments after the command words, e.g. the id of `keys revoke <id>`. */
  args: string[];
  now: Date;
  print(text: string): void;
}

export interface CommandContext extends OfflineContext {
  config: GatewayConfig;
  store: Store;
}

/** JSON when --json was given, else the text. */
export function report(context: OfflineContext, json: unknown, text: () => string): void {
  context.print(context.options.json ? JSON.stringify(json, null, 2) : text());
}
