/**
 * The counting thread (see text-token-count.ts): loads cl100k's tables and counts the chunks it is
 * sent, all off the gateway's event loop. Plain JavaScript, so the thread needs no TypeScript
 * loader when run from the sources.
 *
 * The ranks come from `cl100k-ranks.json` beside the thread's entry, which the build writes from
 * gpt-tokenizer's own ranks (scripts/bundle-server.mjs): parsed as JSON they cost the thread ~10 MiB
 * less resident memory than the package's module, an array literal of 100,256 strings that V8
 * compiles, and are ready sooner. Run from the sources, without the file, the module is loaded.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { GptEncoding } from 'gpt-tokenizer/esm/GptEncoding';

async function cl100kRanks() {
  try {
    return JSON.parse(readFileSync(new URL('./cl100k-ranks.json', import.meta.url), 'utf8'));
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
    return (await import('gpt-tokenizer/esm/bpeRanks/cl100k_base')).default;
  }
}

// What gpt-tokenizer/encoding/cl100k_base makes of the same ranks.
const ranks = await cl100kRanks();
const { countTokens, setMergeCacheSize } = GptEncoding.getEncodingApi('cl100k_base', () => ranks);
// The cache of merged pieces: gpt-tokenizer keeps 100,000, evicting the oldest once full, and V8's
// Map finds its oldest key ever more slowly as deletions pile up at its front. Measured in this
// thread (young generation at 2 MiB): 3 MB of random words counted in 11.0-11.5 s, leaving the
// thread at +111 MiB, against 5.1-5.4 s and +69 MiB with 10,000; 2.1 MB of this repository's
// sources and docs in 302 ms either way, counted again in 150 against 147-164 ms.
setMergeCacheSize(10_000);

// Text that looks like a special token (`<|endoftext|>`) is ordinary text in a prompt: count it
// as such instead of throwing, as the providers do.
const plainText = { disallowedSpecial: new Set() };

parentPort.on('message', ({ id, chunks }) => {
  parentPort.postMessage({ id, counts: chunks.map((chunk) => countTokens(chunk, plainText)) });
});
