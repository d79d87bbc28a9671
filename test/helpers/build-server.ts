import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../scripts/build-server.mjs', import.meta.url));
let built = false;

/**
 * `npm run build:server` once per test process: a test that runs bin/gateway.js (the compiled
 * build, as `npm start` and the `gateway` command do) never runs a build older than the sources.
 * Under scripts/run-tests.mjs, which builds once before any file starts (TEST_SERVER_BUILT=1),
 * it builds nothing: a build empties dist/server first, under the feet of the compiled gateways
 * that files running in parallel have started.
 */
export function buildServer(): void {
  if (built || process.env.TEST_SERVER_BUILT === '1') return;
  const result = spawnSync(process.execPath, [script], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`server build failed:\n${result.stdout}${result.stderr}`);
  built = true;
}
