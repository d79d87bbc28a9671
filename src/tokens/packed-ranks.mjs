/**
 * A BPE encoding's ranks as the counting thread holds them: gpt-tokenizer's merge algorithm over a
 * rank table of a few flat arrays, instead of the package's Map of 100,256 (cl100k) or 199,998
 * (o200k) strings. Measured in a thread: o200k's Map held 12.6 MiB after a full collection and
 * 35 MiB while it was built from the parsed JSON; these arrays hold about 5.
 *
 * The packed form (what the build writes, `packRanks`): `text`, every rank's token that is valid
 * UTF-8 as a string, one after the other in rank order; `lengths`, each rank's UTF-16 length in
 * `text` (0 for a token that is not valid UTF-8, or a rank with no token), as base64 of 16-bit
 * little-endian numbers; `bytes`, the others as [rank, bytes]. Plain JavaScript, for the thread.
 */
import { BytePairEncodingCore } from 'gpt-tokenizer/esm/BytePairEncodingCore';

/** gpt-tokenizer's ranks (an array of strings and byte arrays, by rank) packed for `CountingEncoding`. */
export function packRanks(ranks) {
  const texts = [];
  const lengths = new Uint16Array(ranks.length);
  const bytes = [];
  ranks.forEach((token, rank) => {
    if (typeof token === 'string') {
      texts.push(token);
      lengths[rank] = token.length;
    } else if (token !== undefined) bytes.push([rank, [...token]]);
  });
  return { text: texts.join(''), lengths: Buffer.from(lengths.buffer).toString('base64'), bytes };
}

/** FNV-1a over UTF-16 units: the same for a key as for its place in the packed text. */
function hashOf(text, start, end) {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash;
}

/** Ranks by token text: open addressing over the packed text, each slot a rank + 1 (0: empty). */
class RankTable {
  constructor(text, lengths) {
    this.text = text;
    this.offsets = new Int32Array(lengths.length + 1);
    let size = 1;
    while (size < lengths.length * 2) size *= 2;
    this.mask = size - 1;
    this.slots = new Int32Array(size);
    for (let rank = 0, at = 0; rank < lengths.length; rank++) {
      this.offsets[rank] = at;
      const end = at + lengths[rank];
      if (end > at) {
        let slot = hashOf(text, at, end) & this.mask;
        while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
        this.slots[slot] = rank + 1;
      }
      at = end;
    }
    this.offsets[lengths.length] = text.length;
  }

  get(key) {
    const length = key.length;
    let slot = hashOf(key, 0, length) & this.mask;
    for (let entry = this.slots[slot]; entry !== 0; entry = this.slots[slot]) {
      const start = this.offsets[entry - 1];
      if (this.offsets[entry] - start === length && this.text.startsWith(key, start)) return entry - 1;
      slot = (slot + 1) & this.mask;
    }
    return undefined;
  }
}

/**
 * What the counting thread counts with: gpt-tokenizer's BytePairEncodingCore (its split, merge and
 * merge cache) reading ranks from the packed table. `count` counts text that looks like a special
 * token (`<|endoftext|>`) as ordinary text, as the providers do with a prompt.
 */
export class CountingEncoding extends BytePairEncodingCore {
  constructor(packed, tokenSplitRegex, mergeCacheSize) {
    super({ bytePairRankDecoder: [], tokenSplitRegex, mergeCacheSize });
    const raw = Buffer.from(packed.lengths, 'base64');
    const lengths = new Uint16Array(raw.length / 2);
    for (let rank = 0; rank < lengths.length; rank++) lengths[rank] = raw.readUInt16LE(rank * 2);
    this.ranks = new RankTable(packed.text, lengths);
    // The tokens that are not valid UTF-8, sorted by their bytes, as the package's own binary search reads them.
    this.bytePairNonUtfSortedEncoder = packed.bytes.map(([rank, bytes]) => [new Uint8Array(bytes), rank]).sort(([a], [b]) => Buffer.compare(a, b));
  }

  getBpeRankFromString(key) {
    return this.ranks.get(key);
  }

  /** No special tokens: their text is counted as any other. */
  findNextSpecialToken() {
    return undefined;
  }

  count(text) {
    return this.countNative(text);
  }
}
