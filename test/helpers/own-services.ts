import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A PostgreSQL cluster and a redis-server of a test's own, on spare ports in a temporary
 * directory, that the test may stop and start again under load (the shared services other
 * tests use are never touched). PostgreSQL comes from POSTGRES_BIN (default
 * /usr/lib/postgresql/15/bin); as root, its commands run as the postgres user.
 */
const POSTGRES_BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why the services cannot be started here, or null. */
export function ownServicesMissing(): string | null {
  if (!existsSync(join(POSTGRES_BIN, 'initdb'))) return `no initdb in ${POSTGRES_BIN} (set POSTGRES_BIN)`;
  if (spawnSync('redis-server', ['--version']).status !== 0) return 'no redis-server on PATH';
  return null;
}

/** A port nothing listens on now. */
export async function sparePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface OwnService {
  readonly url: string;
  /** Stops the server (PostgreSQL: fast shutdown, cutting its connections; Redis: at once). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its files. */
  close(): Promise<void>;
}

function asPostgresUser(command: string, args: string[]): [string, string[]] {
  const root = process.getuid?.() === 0;
  return root ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

function run(command: string, args: string[]): void {
  const [file, argv] = asPostgresUser(command, args);
  const result = spawnSync(file, argv, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
}

export async function startOwnPostgres(): Promise<OwnService> {
  const directory = await mkdtemp(join(tmpdir(), 'own-postgres-'));
  if (process.getuid?.() === 0) chownSync(directory, Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()), 0);
  const data = join(directory, 'data');
  const port = await sparePort();
  run(join(POSTGRES_BIN, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const service: OwnService = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      run(join(POSTGRES_BIN, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    async start() {
      run(join(POSTGRES_BIN, 'pg_ctl'), ['-D', data, '-o', options, '-l', join(directory, 'log'), '-w', 'start']);
    },
    async close() {
      spawnSync(...asPostgresUser(join(POSTGRES_BIN, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']));
      await rm(directory, { recursive: true, force: true });
    },
  };
  await service.start();
  return service;
}

export async function startOwnRedis(): Promise<OwnService> {
  const directory = await mkdtemp(join(tmpdir(), 'own-redis-'));
  const port = await sparePort();
  let child: ChildProcess | null = null;
  const service: OwnService = {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (!child) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      child = null;
    },
    async start() {
      // No persistence: a restart comes back empty, the hardest case for the gateway.
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', directory], {
        stdio: 'ignore',
      });
      for (let tries = 0; ; tries++) {
        const ping = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' });
        if (ping.stdout.trim() === 'PONG') return;
        if (tries > 200) throw new Error('redis-server did not start');
        await sleep(25);
      }
    },
    async close() {
      await service.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
  await service.start();
  return service;
}
