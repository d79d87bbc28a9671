/** A seeded generator, so the same prompts come back every run. */
export function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

export interface HugePrompt {
  name: string;
  make(): string;
  /** Whether it fits a 200K-token context (5 MiB of spaces is ~41K cl100k tokens). */
  fitsIn200K: boolean;
}

/**
 * Prompts of about `size` bytes of UTF-8 whose contents stress a byte-level BPE tokenizer: runs
 * without a break, multi-byte characters, whitespace. Newlines are two bytes in JSON: the mix
 * of spaces and newlines stays under the 8 MiB body limit at 5 MiB. Used by the test and the bench.
 */
export function hugePrompts(size: number): HugePrompt[] {
  const of = (pick: (next: () => number) => string) => () => {
    const next = seeded(42);
    const parts: string[] = [];
    let bytes = 0;
    while (bytes < size) {
      const piece = pick(next);
      parts.push(piece);
      bytes += Buffer.byteLength(piece);
    }
    return parts.join('');
  };
  const words = ['the ', 'gateway ', 'holds ', 'a ', 'worst ', 'case, ', 'then ', 'settles. '];
  return [
    { name: 'one character', make: () => 'a'.repeat(size), fitsIn200K: false },
    { name: 'random code points', make: of((next) => String.fromCodePoint(0x20 + Math.floor(next() * 0xd7d0))), fitsIn200K: false },
    { name: 'emoji', make: of((next) => String.fromCodePoint(0x1f300 + Math.floor(next() * 0x2ff))), fitsIn200K: false },
    { name: 'CJK', make: of((next) => String.fromCharCode(0x4e00 + Math.floor(next() * 20_000))), fitsIn200K: false },
    { name: 'spaces and newlines', make: of((next) => (next() < 0.5 ? ' ' : '\n')), fitsIn200K: false },
    { name: 'spaces', make: () => ' '.repeat(size), fitsIn200K: true },
    { name: 'English', make: of((next) => words[Math.floor(next() * words.length)]!), fitsIn200K: false },
  ];
}
