import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { after } from 'node:test';
import { buildServer } from './build-server.ts';

/** The gateway processes still running. */
const running = new Set<ChildProcess>();
// Once the file's tests are done: a gateway that a failed test never stopped would keep this
// process alive (its pipes) until the runner's timeout ends the file.
after(() => {
  for (const child of running) child.kill('SIGKILL');
});

export interface GatewayExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface GatewayProcess {
  child: ChildProcess;
  /** Base URL, e.g. http://127.0.0.1:PORT (the API is under /v1). */
  url: string;
  /** Resolves when the process has exited. */
  exited: Promise<GatewayExit>;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  /** Stops the process: SIGTERM by default, SIGKILL to simulate a crash. */
  stop(signal?: NodeJS.Signals): Promise<GatewayExit>;
}

export interface GatewayProcessOptions {
  /**
   * Run the compiled build (bin/gateway.js -> dist/server, built by `buildServer()`) as `npm start`
   * does. Default: the TypeScript sources through tsx, so a test always runs the code as edited.
   */
  compiled?: boolean;
  /** Run it as `npm start -- --config FILE` (the compiled build, under npm); `child` is npm's process. */
  npmStart?: boolean;
  /** Standard output into this file, as `gateway start > file` runs it, instead of a pipe; `output()` reads it. */
  stdoutFile?: string;
}

/** `gateway start` as a real process; resolves once it listens. */
export async function startGatewayProcess(
  configPath: string,
  env: NodeJS.ProcessEnv = {},
  options: GatewayProcessOptions = {},
): Promise<GatewayProcess> {
  if (options.compiled || options.npmStart) buildServer();
  const entry = options.compiled ? ['bin/gateway.js'] : ['--import', 'tsx', 'src/cli/main.ts'];
  const file = options.stdoutFile ? openSync(options.stdoutFile, 'w') : null;
  const [command, args] = options.npmStart
    ? ['npm', ['start', '--silent', '--', '--config', configPath]]
    : [process.execPath, [...entry, 'start', '--config', configPath]];
  const child = spawn(command, args, {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', file ?? 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  // The child has its own descriptor of the file.
  if (file !== null) closeSync(file);
  let piped = '';
  child.stdout?.on('data', (chunk) => (piped += chunk));
  child.stderr!.on('data', (chunk) => (piped += chunk));
  const output = () => (options.stdoutFile ? readFileSync(options.stdoutFile, 'utf8') : '') + piped;
  const exited = new Promise<GatewayExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running behind the failed test, holding the test process open.
      child.kill('SIGKILL');
      reject(new Error(`gateway did not start:\n${output()}`));
    }, 20_000);
    // A file is looked at every 20 ms; a pipe on every chunk.
    const polling = file === null ? null : setInterval(() => look(), 20);
    const look = () => {
      const match = /gateway listening on (http:\/\/[^/\s"]+)\/v1/.exec(output());
      if (!match) return;
      clearTimeout(timer);
      if (polling) clearInterval(polling);
      child.stdout?.off('data', look);
      resolve(match[1]!);
    };
    child.stdout?.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (polling) clearInterval(polling);
      reject(new Error(`gateway exited with ${code}:\n${output()}`));
    });
  });
  return {
    child,
    url,
    exited,
    output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
