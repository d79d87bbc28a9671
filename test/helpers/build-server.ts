import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../scripts/build-server.mjs', import.meta.url));
let built = false;

/**
 * `npm run build:server` once per test process: a test that runs bin/gateway.js (the compiled
 * build, as `npm start` and the `gateway` command do) never runs a build older than the sources.
 */
export function buildServer(): void {
  if (built) return;
  const result = spawnSync(process.execPath, [script], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`server build failed:\n${result.stdout}${result.stderr}`);
  built = true;
}
