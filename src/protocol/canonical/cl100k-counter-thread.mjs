/**
 * The counting thread (see text-token-count.ts): loads cl100k's tables and counts the chunks it is
 * sent, all off the gateway's event loop. Plain JavaScript, so the thread needs no TypeScript
 * loader when run from the sources.
 *
 * The ranks come from `cl100k-ranks.json` beside the thread's entry, which the build writes from
 * gpt-tokenizer's own ranks (scripts/build-server.mjs): parsed as JSON they cost the thread ~10 MiB
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
const { countTokens } = GptEncoding.getEncodingApi('cl100k_base', () => ranks);

// Text that looks like a special token (`<|endoftext|>`) is ordinary text in a prompt: count it
// as such instead of throwing, as the providers do.
const plainText = { disallowedSpecial: new Set() };

parentPort.on('message', ({ id, chunks }) => {
  parentPort.postMessage({ id, counts: chunks.map((chunk) => countTokens(chunk, plainText)) });
});
