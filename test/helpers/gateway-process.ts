import { spawn, type ChildProcess } from 'node:child_process';

export interface GatewayProcess {
  child: ChildProcess;
  /** Base URL, e.g. http://127.0.0.1:PORT (the API is under /v1). */
  url: string;
  /** Stops the process: SIGTERM by default, SIGKILL to simulate a crash. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** `gateway start` as a real process; resolves once it listens. */
export async function startGatewayProcess(configPath: string, env: NodeJS.ProcessEnv = {}): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['bin/gateway.js', 'start', '--config', configPath], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${output}`)), 20_000);
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /gateway listening on (http:\/\/[^/\s"]+)\/v1/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${output}`)));
  });
  return {
    child,
    url,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
