/** Where a step of unescaping is: the next byte to read, the code units written so far. */
export interface UnescapeState {
  at: number;
  written: number;
}

export const LONG: number;
export function escaped(bytes: Uint8Array, at: number): boolean;
export function unescapedQuote(bytes: Uint8Array, from: number, end?: number): number;
export function eachChild(
  body: unknown,
  visit: (container: object, key: string | number, child: unknown, path: Array<string | number>) => void,
): void;
export function unescapeNarrow(text: Uint8Array, end: number, out: Uint8Array, state: UnescapeState, final?: boolean): 0 | -1 | -2;
export function unescapeWide(text: Uint8Array, end: number, out: Uint16Array, state: UnescapeState, final?: boolean): 0 | -1;
export function sequenceStart(bytes: Uint8Array, from: number, end: number): number;
export function parseAround(
  bytes: Uint8Array,
  length: number,
  literals: ReadonlyArray<readonly [number, number]>,
  maxDepth: number,
): { body: unknown; deepAt: string | null; found: Map<number, Array<string | number>> | null } | null;
export function decodeText(bytes: Buffer): string;
