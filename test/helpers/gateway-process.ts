import { spawn, type ChildProcess } from 'node:child_process';
import { buildServer } from './build-server.ts';

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
}

/** `gateway start` as a real process; resolves once it listens. */
export async function startGatewayProcess(
  configPath: string,
  env: NodeJS.ProcessEnv = {},
  options: GatewayProcessOptions = {},
): Promise<GatewayProcess> {
  if (options.compiled) buildServer();
  const entry = options.compiled ? ['bin/gateway.js'] : ['--import', 'tsx', 'src/cli/main.ts'];
  const child = spawn(process.execPath, [...entry, 'start', '--config', configPath], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<GatewayExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${output}`)), 20_000);
    const look = () => {
      const match = /gateway listening on (http:\/\/[^/\s"]+)\/v1/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', look);
      resolve(match[1]!);
    };
    child.stdout!.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}:\n${output}`));
    });
  });
  return {
    child,
    url,
    exited,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
