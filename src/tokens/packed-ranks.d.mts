/** gpt-tokenizer's ranks packed for the counting thread (packed-ranks.mjs). */
export interface PackedRanks {
  text: string;
  lengths: string;
  bytes: Array<[number, number[]]>;
}

export function packRanks(ranks: ReadonlyArray<string | number[] | undefined>): PackedRanks;

/** gpt-tokenizer's merge algorithm over the packed ranks. */
export class CountingEncoding {
  constructor(packed: PackedRanks, tokenSplitRegex: RegExp, mergeCacheSize: number);
  /** The tokens of `text`, special-token text counted as ordinary text. */
  count(text: string): number;
}
