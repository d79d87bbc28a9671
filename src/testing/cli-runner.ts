import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real launcher, as an operator runs it (the compiled build: see test/helpers/build-server.ts). */
export const launcher = fileURLToPath(new URL('../../bin/gateway.js', import.meta.url));

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Temporary folders for databases and config files, removed by `removeAll`. */
export function temporaryFolders() {
  const folders: string[] = [];
  return {
    async make(): Promise<string> {
      const folder = await mkdtemp(join(tmpdir(), 'gateway-cli-'));
      folders.push(folder);
      return folder;
    },
    removeAll: () => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))),
  };
}

/** The environment a CLI run gets: this process's, without GATEWAY_CONFIG, with `env` over it (undefined removes). */
function cliEnv(databasePath: string, env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...process.env, DATABASE_PATH: databasePath };
  delete result.GATEWAY_CONFIG;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}

/** Runs `gateway <args>` to its end against the SQLite file at `databasePath`. */
export function runGateway(databasePath: string, args: string[], env: Record<string, string | undefined> = {}): Promise<CliOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [launcher, ...args], { env: cliEnv(databasePath, env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Its stdout; fails the test when it exits other than 0. */
export async function succeedGateway(databasePath: string, args: string[], env: Record<string, string | undefined> = {}): Promise<string> {
  const outcome = await runGateway(databasePath, args, env);
  assert.equal(outcome.code, 0, `gateway ${args.join(' ')} failed: ${outcome.stderr}`);
  return outcome.stdout;
}

export interface StartedGateway {
  url: string;
  /** Every log line so far. */
  output(): string;
  stop(): Promise<number | null>;
}

/** `gateway start <args>` until it logs where it listens; rejects with its output when it exits first. */
export function startGatewayProcess(databasePath: string, args: string[], env: Record<string, string | undefined> = {}): Promise<StartedGateway> {
  const child: ChildProcess = spawn(process.execPath, [launcher, 'start', ...args], {
    env: cliEnv(databasePath, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gateway start did not listen within 20 s:\n${output}`));
    }, 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const url = /gateway listening on (http:\/\/[^\s"]+)\/v1/.exec(output)?.[1];
      if (!url) return;
      clearTimeout(timer);
      resolve({
        url,
        output: () => output,
        stop: () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`gateway start exited with ${code}:\n${output}`), { code, output }));
    });
  });
}
