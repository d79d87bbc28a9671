export interface BufferPool<Kept extends ArrayBufferLike> {
  /** The smallest kept buffer of at least `size` bytes, else a new one of `room` bytes rounded up to a MiB. */
  take(size: number, room?: number): Kept;
  /** Keeps `buffer` for a later take, if it is among the largest `keep`. */
  give(buffer: Kept): void;
  /** Whether a kept buffer has at least `size` bytes. */
  holds(size: number): boolean;
  clear(): void;
}

/** At most `keep` buffers kept for the next large bodies; `make` makes a new one of a given size. */
export function bufferPool<Kept extends ArrayBufferLike>(keep: number, make: (bytes: number) => Kept): BufferPool<Kept>;
