/**
 * The counting thread (see text-token-count.ts): loads cl100k's tables, ~40 MB and a few hundred
 * milliseconds of work, and counts the chunks it is sent, all off the gateway's event loop.
 * Plain JavaScript, so the thread needs no TypeScript loader when run from the sources.
 */
import { parentPort } from 'node:worker_threads';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';

// Text that looks like a special token (`<|endoftext|>`) is ordinary text in a prompt: count it
// as such instead of throwing, as the providers do.
const plainText = { disallowedSpecial: new Set() };

parentPort.on('message', ({ id, chunks }) => {
  parentPort.postMessage({ id, counts: chunks.map((chunk) => countTokens(chunk, plainText)) });
});
