// The server's bundle: the given entry points and what they import, bundled by esbuild into ES
// modules in `out`, with the packages left as imports from node_modules (so `out` must lie inside
// the checkout). The threads' entries and serving-heap are always in it: a thread is started from
// beside the chunk of the module that starts it (src/lib/thread-jobs.ts). Each thread's entry is
// one file, so that a thread loads no more modules than it must as it starts (the process's first
// huge prompt waits for the body thread's start): the counting thread's with gpt-tokenizer in it,
// the body thread's as CommonJS (loaded without Node's ES module loader, ~10 ms less). Used by
// scripts/build-server.mjs (dist/server) and the benchmarks' compiled gateway
// (bench/compiled-gateway.ts).
import { cpSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const common = { platform: 'node', target: 'node20.18', sourcemap: 'linked', logLevel: 'warning', legalComments: 'none' };

export async function bundleServer(out, entryPoints) {
  await rm(out, { recursive: true, force: true });
  await build({
    entryPoints: {
      ...entryPoints,
      // What bin/gateway.js sets before it loads main (src/lib/serving-heap.ts).
      'serving-heap': join(root, 'src', 'lib', 'serving-heap.ts'),
      // Read by this build for the catalog's JSON below.
      'catalog-data': join(root, 'src', 'catalog', 'catalog-data.ts'),
    },
    outdir: out,
    bundle: true,
    splitting: true,
    format: 'esm',
    packages: 'external',
    ...common,
  });
  // The counting thread with gpt-tokenizer in its one file (its ranks module aside, which the build's
  // JSON replaces): resolving and loading the package's modules took ~20 ms of the thread's start.
  await build({
    entryPoints: { 'cl100k-counter-thread': join(root, 'src', 'tokens', 'cl100k-counter-thread.mjs') },
    outdir: out,
    bundle: true,
    format: 'esm',
    external: ['gpt-tokenizer/esm/bpeRanks/*'],
    ...common,
  });
  await build({
    entryPoints: { 'json-body-thread': join(root, 'src', 'http', 'body', 'json-body-thread.mjs') },
    outdir: out,
    outExtension: { '.js': '.cjs' },
    bundle: true,
    format: 'cjs',
    packages: 'external',
    ...common,
  });
  // The counting thread's cl100k and o200k ranks, gpt-tokenizer's own, packed as JSON (src/tokens/packed-ranks.mjs).
  const { packRanks } = await import(pathToFileURL(join(root, 'src', 'tokens', 'packed-ranks.mjs')).href);
  for (const encoding of ['cl100k', 'o200k']) {
    const { default: ranks } = await import(`gpt-tokenizer/esm/bpeRanks/${encoding}_base`);
    writeFileSync(join(out, `${encoding}-ranks.json`), JSON.stringify(packRanks(ranks)));
  }
  // The price catalog's providers as JSON, which the bundle reads instead of loading the package (src/catalog/catalog-data.ts).
  const { catalogSnapshot, CATALOG_DATA_FILE } = await import(pathToFileURL(join(out, 'catalog-data.js')).href);
  writeFileSync(join(out, CATALOG_DATA_FILE), JSON.stringify(catalogSnapshot()));
  // The storage schemas' .sql files, read at run time relative to the chunk that reads them: the
  // chunks stand in `out` where src/storage/ stands in the sources (src/storage/schema-files.ts).
  for (const backend of ['postgres', 'sqlite']) {
    cpSync(join(root, 'src', 'storage', backend, 'schema'), join(out, backend, 'schema'), { recursive: true });
  }
}
