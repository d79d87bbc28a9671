import { openSharedState, type SharedState } from '../open-shared-state.ts';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.ts';
import { describeStore, storeBackend } from '../storage/open-store.ts';
import { CliError } from './cli-error.ts';
import { report, type CommandContext, type CommandOptions } from './command-context.ts';
import { addFunds, clearBudget, setBudget, showBudget, showFunds } from './funds-commands.ts';
import { createKey, listKeys, revokeKey } from './keys-commands.ts';
import { showModels, type ConfigContext } from './models-command.ts';
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
} as const;

const globalOptions = new Set(['config', 'json', 'help']);

/** An unknown command gets the whole usage text, not just a hint. */
class UnknownCommandError extends CliError {}

interface CommandSpec {
  words: string[];
  /** Names of the required positional arguments, for messages. */
  args: string[];
  /** Options besides the global ones. */
  options: (keyof CommandOptions)[];
  run(context: CommandContext): Promise<void>;
}

/** A command that reads only the config: no database is opened, no provider is needed. */
interface ConfigCommandSpec extends Omit<CommandSpec, 'run'> {
  configOnly: true;
  run(context: ConfigContext): Promise<void>;
}

const commands: Array<CommandSpec | ConfigCommandSpec> = [
  { words: ['models'], args: [], options: [], configOnly: true, run: showModels },
  { words: ['keys', 'create'], args: [], options: ['name', 'scopes', 'models', 'daily-limit', 'rate-limit', 'expires'], run: createKey },
  { words: ['keys', 'list'], args: [], options: [], run: listKeys },
  { words: ['keys', 'revoke'], args: ['id-or-prefix'], options: [], run: revokeKey },
  { words: ['funds', 'add'], args: ['usd'], options: ['note'], run: addFunds },
  { words: ['funds', 'show'], args: [], options: [], run: showFunds },
  { words: ['budget', 'set'], args: ['usd'], options: [], run: setBudget },
  { words: ['budget', 'clear'], args: [], options: [], run: clearBudget },
  { words: ['budget', 'show'], args: [], options: [], run: showBudget },
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

function findCommand(positionals: string[]): CommandSpec | ConfigCommandSpec {
  const command = commands.find((candidate) => candidate.words.every((word, index) => positionals[index] === word));
  if (command) return command;
  const group = commands.filter((candidate) => candidate.words.length > 1 && candidate.words[0] === positionals[0]);
  if (group.length) {
    const choices = group.map((candidate) => candidate.words[1]).join(', ');
    const given = positionals[1] === undefined ? 'no subcommand' : `unknown subcommand "${positionals[1]}"`;
    throw new CliError(`${positionals[0]}: ${given}; use one of: ${choices}`, 2);
  }
  throw new UnknownCommandError(`unknown command "${positionals[0]}"`, 2);
}

function checkUsage(command: Omit<CommandSpec, 'run'>, args: string[], options: CommandOptions): void {
  const name = command.words.join(' ');
  for (const option of Object.keys(options)) {
    if (!globalOptions.has(option) && !command.options.includes(option as keyof CommandOptions)) {
      throw new CliError(`${name} does not take --${option}`, 2);
    }
  }
  if (args.length < command.args.length) throw new CliError(`${name} needs <${command.args[args.length]}>`, 2);
  if (args.length > command.args.length) throw new CliError(`${name}: unexpected argument "${args[command.args.length]}"`, 2);
}

// Imported lazily so key and funds commands never load the HTTP stack. startGateway logs
// its address and owns shutdown on SIGINT/SIGTERM.
async function startServer(options: CommandOptions): Promise<void> {
  const { startGateway } = await import('../start-gateway.ts');
  await startGateway({ configPath: options.config });
}

async function dispatch(argv: string[], output: CliOutput): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: optionDefinitions, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliError((error as Error).message, 2);
  }
  const { values: options, positionals } = parsed;
  if (options.help || positionals.length === 0 || positionals[0] === 'help') {
    output.stdout(usageText);
    return;
  }
  if (positionals[0] === 'start') {
    checkUsage({ words: ['start'], args: [], options: [] }, positionals.slice(1), options);
    return startServer(options);
  }
  const command = findCommand(positionals);
  const args = positionals.slice(command.words.length);
  checkUsage(command, args, options);

  const config = loadConfig(options.config);
  if ('configOnly' in command) return command.run({ config, options, args, print: output.stdout });
  let shared: SharedState;
  try {
    // With REDIS_URL, key changes made here are announced to every running gateway at once.
    shared = await openSharedState(config);
  } catch (error) {
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
    if (exitCode === 2) output.stderr(error instanceof UnknownCommandError ? usageText : 'Run "gateway help" for usage.');
    return exitCode;
  }
}
