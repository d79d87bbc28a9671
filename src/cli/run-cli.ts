import { DependencyUnreachable, openSharedState, type SharedState } from '../open-shared-state.ts';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.ts';
import { describeStore, storeBackend } from '../storage/open-store.ts';
import { CliError } from './cli-error.ts';
import { checkConfig } from './check-config-command.ts';
import { reloadGateway } from './reload-command.ts';
import { report, type CommandContext, type CommandOptions, type OfflineContext } from './command-context.ts';
import { addFunds, clearBudget, setBudget, showBudget, showFunds } from './funds-commands.ts';
import { createKey, listKeys, revokeKey } from './keys-commands.ts';
import { addMember, listMembers, removeMember } from './members-commands.ts';
import { showModels } from './models-command.ts';
import { listReceipts } from './receipts-commands.ts';
import { didYouMean } from './report-options.ts';
import { showUsage } from './usage-commands.ts';
import { setupClaudeCode, setupCodex } from './setup-commands.ts';
import { usageText } from './usage.ts';

export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processOutput: CliOutput = {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
};

const optionDefinitions = {
  config: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  scopes: { type: 'string' },
  models: { type: 'string' },
  'daily-limit': { type: 'string' },
  'rate-limit': { type: 'string' },
  expires: { type: 'string' },
  note: { type: 'string' },
  key: { type: 'string' },
  model: { type: 'string' },
  status: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  limit: { type: 'string' },
  csv: { type: 'boolean' },
  by: { type: 'string' },
  role: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  url: { type: 'string' },
  scope: { type: 'string' },
  write: { type: 'boolean' },
  'built-in': { type: 'boolean' },
} as const;

const globalOptions = new Set(['config', 'json', 'help']);

/** An unknown command gets the whole usage text, not just a hint. */
class UnknownCommandError extends CliError {}

type CommandSpec = {
  words: string[];
  /** Names of the required positional arguments, for messages. */
  args: string[];
  /** Options besides the global ones. */
  options: (keyof CommandOptions)[];
} & (
  | { run(context: CommandContext): Promise<void> }
  /** Opens no database, and loads the config itself if at all. */
  | { offline: true; run(context: OfflineContext): Promise<void> }
);

const receiptOptions: (keyof CommandOptions)[] = ['key', 'model', 'status', 'since', 'until', 'limit', 'csv'];

const commands: CommandSpec[] = [
  { words: ['start'], args: [], options: ['port', 'host'], offline: true, run: startServer },
  { words: ['check-config'], args: [], options: [], offline: true, run: checkConfig },
  { words: ['reload'], args: [], options: ['port'], offline: true, run: reloadGateway },
  // Reads only the config: works without provider secrets and opens no database.
  {
    words: ['models'],
    args: [],
    options: [],
    offline: true,
    run: (context: OfflineContext) => showModels({ ...context, config: loadConfig(context.options.config) }),
  },
  { words: ['keys', 'create'], args: [], options: ['name', 'scopes', 'models', 'daily-limit', 'rate-limit', 'expires'], run: createKey },
  { words: ['keys', 'list'], args: [], options: [], run: listKeys },
  { words: ['keys', 'revoke'], args: ['id-or-prefix'], options: [], run: revokeKey },
  { words: ['funds', 'add'], args: ['usd'], options: ['note'], run: addFunds },
  { words: ['funds', 'show'], args: [], options: [], run: showFunds },
  { words: ['budget', 'set'], args: ['usd'], options: [], run: setBudget },
  { words: ['budget', 'clear'], args: [], options: [], run: clearBudget },
  { words: ['budget', 'show'], args: [], options: [], run: showBudget },
  { words: ['receipts'], args: [], options: receiptOptions, run: listReceipts },
  { words: ['usage'], args: [], options: ['by', 'since', 'until', 'csv'], run: showUsage },
  { words: ['members', 'list'], args: [], options: [], run: listMembers },
  { words: ['members', 'add'], args: ['address'], options: ['role'], run: addMember },
  { words: ['members', 'remove'], args: ['address'], options: [], run: removeMember },
  { words: ['setup', 'claude-code'], args: [], options: ['model', 'url', 'scope', 'write'], run: setupClaudeCode },
  { words: ['setup', 'codex'], args: [], options: ['model', 'url', 'write', 'built-in'], run: setupCodex },
  {
    words: ['migrate'],
    args: [],
    options: [],
    run: async (context: CommandContext) => {
      // openStore has migrated already; running again is a no-op that proves it.
      await context.store.migrate();
      const database = describeStore(storeBackend(context.config));
      report(context, { database, migrated: true }, () => `Database ${database} is up to date.`);
    },
  },
];

function findCommand(positionals: string[]): CommandSpec {
  const command = commands.find((candidate) => candidate.words.every((word, index) => positionals[index] === word));
  if (command) return command;
  const group = commands.filter((candidate) => candidate.words.length > 1 && candidate.words[0] === positionals[0]);
  if (group.length) {
    const subcommands = group.map((candidate) => candidate.words[1]!);
    const given = positionals[1] === undefined ? 'no subcommand' : `unknown subcommand "${positionals[1]}"`;
    const hint = positionals[1] === undefined ? '' : didYouMean(positionals[1], subcommands);
    throw new CliError(`${positionals[0]}: ${given}${hint}; use one of: ${subcommands.join(', ')}`, 2);
  }
  const names = new Set(['help', ...commands.map((candidate) => candidate.words[0]!)]);
  throw new UnknownCommandError(`unknown command "${positionals[0]}"${didYouMean(positionals[0]!, names)}`, 2);
}

function checkUsage(command: CommandSpec, args: string[], options: CommandOptions): void {
  const name = command.words.join(' ');
  for (const option of Object.keys(options)) {
    if (!globalOptions.has(option) && !command.options.includes(option as keyof CommandOptions)) {
      const hint = didYouMean(option, [...globalOptions, ...command.options], '--');
      throw new CliError(`${name} does not take --${option}${hint}`, 2);
    }
  }
  if (args.length < command.args.length) throw new CliError(`${name} needs <${command.args[args.length]}>`, 2);
  if (args.length > command.args.length) throw new CliError(`${name}: unexpected argument "${args[command.args.length]}"`, 2);
}

// Imported lazily so key and funds commands never load the HTTP stack. startGateway logs
// its address and owns shutdown on SIGINT/SIGTERM.
async function startServer({ options }: OfflineContext): Promise<void> {
  const { startGateway } = await import('../start-gateway.ts');
  await startGateway({ configPath: options.config, port: options.port, host: options.host });
}

/** parseArgs's message for an option no command takes, with the nearest one the command takes. */
function unknownOption(error: Error, argv: string[]): CliError {
  const given = /Unknown option '--([^']+)'/.exec(error.message)?.[1];
  const { positionals } = parseArgs({ args: argv, options: optionDefinitions, allowPositionals: true, strict: false });
  const command = commands.find((candidate) => candidate.words.every((word, index) => positionals[index] === word));
  const names = command ? [...globalOptions, ...command.options] : Object.keys(optionDefinitions);
  const hint = given === undefined ? '' : didYouMean(given, names, '--');
  const message = error.message.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, '');
  return new CliError(`${message}${hint}`, 2);
}

async function dispatch(argv: string[], output: CliOutput): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: optionDefinitions, allowPositionals: true, strict: true });
  } catch (error) {
    throw unknownOption(error as Error, argv);
  }
  const { values: options, positionals } = parsed;
  if (options.help || positionals.length === 0 || positionals[0] === 'help') {
    output.stdout(usageText);
    return;
  }
  const command = findCommand(positionals);
  const args = positionals.slice(command.words.length);
  checkUsage(command, args, options);
  if ('offline' in command) return command.run({ options, args, now: new Date(), print: output.stdout });

  const config = loadConfig(options.config);
  let shared: SharedState;
  try {
    // With REDIS_URL, key changes made here are announced to every running gateway at once.
    shared = await openSharedState(config);
  } catch (error) {
    if (error instanceof DependencyUnreachable) throw new CliError(error.message);
    throw new CliError(`cannot open database ${describeStore(storeBackend(config))}: ${(error as Error).message}`);
  }
  try {
    await command.run({ config, store: shared.store, options, args, now: new Date(), print: output.stdout });
  } finally {
    await shared.close();
  }
}

/** Runs one CLI invocation and returns its exit code; failures become one line on stderr. */
export async function runCli(argv: string[], output: CliOutput = processOutput): Promise<number> {
  try {
    await dispatch(argv, output);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const exitCode = error instanceof CliError ? error.exitCode : 1;
    output.stderr(`gateway: ${message}`);
    if (error instanceof CliError && error.usageHint)
      output.stderr(error instanceof UnknownCommandError ? usageText : 'Run "gateway help" for usage.');
    return exitCode;
  }
}
