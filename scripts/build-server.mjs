// Builds the server and CLI into dist/server: src/cli/main.ts and what it imports, bundled by
// esbuild into ES modules, with the packages left as imports from node_modules. `gateway start`
// loads only what it uses: the HTTP stack is its own chunk, which key and funds commands never load.
// Run by `npm ci` (prepare), `npm start` (prestart) and `npm test`; takes well under a second.
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'server');

rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: {
    main: join(root, 'src', 'cli', 'main.ts'),
    // What bin/gateway.js sets before it loads main (src/lib/serving-heap.ts).
    'serving-heap': join(root, 'src', 'lib', 'serving-heap.ts'),
    // Threads' entries, started from beside the chunk of the module that starts them (src/lib/thread-jobs.ts).
    'cl100k-counter-thread': join(root, 'src', 'protocol', 'canonical', 'cl100k-counter-thread.mjs'),
    'json-body-thread': join(root, 'src', 'http', 'json-body-thread.mjs'),
  },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
  legalComments: 'none',
});

// The counting thread's cl100k ranks, gpt-tokenizer's own, as JSON (src/protocol/canonical/cl100k-counter-thread.mjs).
const { default: cl100kRanks } = await import('gpt-tokenizer/esm/bpeRanks/cl100k_base');
writeFileSync(join(out, 'cl100k-ranks.json'), JSON.stringify(cl100kRanks));
