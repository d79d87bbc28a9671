#!/usr/bin/env node
// The `gateway` command (and `npm start`): runs the compiled build in dist/server, which `npm ci`
// (prepare) and `npm run build` make. Nothing is built or compiled at start.
import { existsSync } from 'node:fs';

const main = new URL('../dist/server/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error(`gateway: no compiled build at ${main.pathname}; run \`npm run build\` (npm ci does it)`);
  process.exit(1);
}
// V8's young generation stays at its first size while the gateway starts (src/lib/serving-heap.ts).
const { holdYoungGeneration } = await import(new URL('../dist/server/serving-heap.js', import.meta.url).href);
holdYoungGeneration();
await import(main.href);
