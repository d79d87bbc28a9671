import { join, resolve } from 'node:path';
import { bundleServer } from '../scripts/bundle-server.mjs';

const OUT = resolve('dist', 'bench-gateway');
let built: Promise<string> | undefined;

/**
 * bench/gateway-process.ts compiled as `npm start` runs the gateway (scripts/bundle-server.mjs),
 * built once per bench run: the gateway is measured without a TypeScript loader, its threads from
 * their compiled entries (the counting thread reading its ranks as JSON), as it is deployed.
 * Returns the script for `startChild`.
 */
export function compiledGatewayProcess(): Promise<string> {
  built ??= (async () => {
    await bundleServer(OUT, { 'gateway-process': resolve('bench', 'gateway-process.ts') });
    return join(OUT, 'gateway-process.js');
  })();
  return built;
}
