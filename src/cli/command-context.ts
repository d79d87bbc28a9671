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
  model?: string;
  url?: string;
  scope?: string;
  write?: boolean;
}

export interface CommandContext {
  config: GatewayConfig;
  store: Store;
  options: CommandOptions;
  /** Arguments after the command words, e.g. the id of `keys revoke <id>`. */
  args: string[];
  now: Date;
  print(text: string): void;
}

/** JSON when --json was given, else the text. */
export function report(context: CommandContext, json: unknown, text: () => string): void {
  context.print(context.options.json ? JSON.stringify(json, null, 2) : text());
}
