/**
 * The counting thread (see text-token-count.ts): loads cl100k's tables and counts the chunks it is
 * sent, all off the gateway's event loop; o200k's (OpenAI's current models) only once a count asks
 * for them. Plain JavaScript, so the thread needs no TypeScript loader when run from the sources.
 *
 * The ranks come from `cl100k-ranks.json` (and `o200k-ranks.json`) beside the thread's entry, which the build writes from
 * gpt-tokenizer's own ranks (scripts/bundle-server.mjs): parsed as JSON they cost the thread ~10 MiB
 * less resident memory than the package's module, an array literal of 100,256 strings that V8
 * compiles, and are ready sooner. Run from the sources, without the file, the module is loaded.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { GptEncoding } from 'gpt-tokenizer/esm/GptEncoding';

const RANK_MODULES = {
  cl100k_base: () => import('gpt-tokenizer/esm/bpeRanks/cl100k_base'),
  o200k_base: () => import('gpt-tokenizer/esm/bpeRanks/o200k_base'),
};

async function ranksOf(encoding) {
  try {
    return JSON.parse(readFileSync(new URL(`./${encoding.split('_')[0]}-ranks.json`, import.meta.url), 'utf8'));
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
    return (await RANK_MODULES[encoding]()).default;
  }
}

// What gpt-tokenizer/encoding/<encoding> makes of the same ranks. The cache of merged pieces: gpt-tokenizer keeps 100,000, evicting the oldest once full, and V8's
// Map finds its oldest key ever more slowly as deletions pile up at its front. Measured in this
// thread (young generation at 2 MiB): 3 MB of random words counted in 11.0-11.5 s, leaving the
// thread at +111 MiB, against 5.1-5.4 s and +69 MiB with 10,000; 2.1 MB of this repository's
// sources and docs in 302 ms either way, counted again in 150 against 147-164 ms.
async function load(encoding) {
  const ranks = await ranksOf(encoding);
  const api = GptEncoding.getEncodingApi(encoding, () => ranks);
  api.setMergeCacheSize(10_000);
  return api;
}

const encodings = new Map([['cl100k_base', await load('cl100k_base')]]);
// Text that looks like a special token (`<|endoftext|>`) is ordinary text in a prompt: count it
// as such instead of throwing, as the providers do.
const plainText = { disallowedSpecial: new Set() };

// Messages are answered in order: a count waiting for o200k's tables holds the ones after it.
let queue = Promise.resolve();
parentPort.on('message', ({ id, chunks, encoding = 'cl100k_base' }) => {
  queue = queue.then(async () => {
    if (!encodings.has(encoding)) encodings.set(encoding, await load(encoding));
    const { countTokens } = encodings.get(encoding);
    parentPort.postMessage({ id, counts: chunks.map((chunk) => countTokens(chunk, plainText)) });
  });
});
