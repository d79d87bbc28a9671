/**
 * The counting thread (see text-token-count.ts): counts the chunks it is sent, off the gateway's
 * event loop, loading an encoding's ranks (cl100k's for the gateway's bounds, o200k's for OpenAI's
 * current models) once a count or a `warm` message asks for them: a gateway that only ever counts
 * for one never holds the other's. Plain JavaScript, so the thread needs no TypeScript loader when
 * run from the sources.
 *
 * The ranks come packed (packed-ranks.mjs) in `cl100k-ranks.json` and `o200k-ranks.json` beside
 * the thread's entry, which the build writes from gpt-tokenizer's own ranks
 * (scripts/bundle-server.mjs): one string and two small arrays to parse, where the package's
 * module is an array literal of up to 200,000 strings that V8 compiles. Run from the sources,
 * without the files, the module is loaded and packed here.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { CL100K_TOKEN_SPLIT_REGEX, O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/esm/encodingParams/constants';
import { CountingEncoding, packRanks } from './packed-ranks.mjs';

const ENCODINGS = {
  cl100k_base: { split: CL100K_TOKEN_SPLIT_REGEX, module: () => import('gpt-tokenizer/esm/bpeRanks/cl100k_base') },
  o200k_base: { split: O200K_TOKEN_SPLIT_REGEX, module: () => import('gpt-tokenizer/esm/bpeRanks/o200k_base') },
};

async function packedRanksOf(encoding) {
  try {
    return JSON.parse(readFileSync(new URL(`./${encoding.split('_')[0]}-ranks.json`, import.meta.url), 'utf8'));
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
    return packRanks((await ENCODINGS[encoding].module()).default);
  }
}

// The cache of merged pieces: gpt-tokenizer keeps 100,000, evicting the oldest once full, and V8's
// Map finds its oldest key ever more slowly as deletions pile up at its front. Measured in this
// thread (young generation at 2 MiB): 3 MB of random words counted in 11.0-11.5 s, leaving the
// thread at +111 MiB, against 5.1-5.4 s and +69 MiB with 10,000; 2.1 MB of this repository's
// sources and docs in 302 ms either way, counted again in 150 against 147-164 ms.
const MERGE_CACHE_SIZE = 10_000;

async function load(encoding) {
  return new CountingEncoding(await packedRanksOf(encoding), ENCODINGS[encoding].split, MERGE_CACHE_SIZE);
}

const encodings = new Map();

// Messages are answered in order: a count waiting for an encoding's ranks holds the ones after it.
let queue = Promise.resolve();
parentPort.on('message', ({ id, chunks, encoding = 'cl100k_base', warm }) => {
  queue = queue.then(async () => {
    if (!encodings.has(encoding)) encodings.set(encoding, await load(encoding));
    // Ranks loaded ahead of a count likely to come (text-token-count.ts `startCounting`): nothing to answer.
    if (warm) return;
    const counter = encodings.get(encoding);
    parentPort.postMessage({ id, counts: chunks.map((chunk) => counter.count(chunk)) });
  });
});
