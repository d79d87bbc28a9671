/**
 * Buffers kept for the next large body, on either side of the body thread: memory written once is
 * written again at memcpy speed, where fresh memory costs ~3-4 ms per MiB on the VM this was
 * measured on. Plain JavaScript, for the thread as for the gateway.
 */

const MiB = 1024 * 1024;

/**
 * At most `keep` buffers, the largest of those given back. `take(size, room)` returns the smallest
 * kept one of at least `size` bytes, else `make` of `room` bytes rounded up to a MiB.
 */
export function bufferPool(keep, make) {
  const kept = [];
  return {
    take(size, room = size) {
      let best = -1;
      for (let index = 0; index < kept.length; index++) {
        if (kept[index].byteLength >= size && (best === -1 || kept[index].byteLength < kept[best].byteLength)) best = index;
      }
      if (best !== -1) return kept.splice(best, 1)[0];
      return make(Math.max(MiB, Math.ceil(room / MiB) * MiB));
    },
    give(buffer) {
      kept.push(buffer);
      kept.sort((a, b) => b.byteLength - a.byteLength);
      kept.length = Math.min(kept.length, keep);
    },
    holds(size) {
      return kept.some((buffer) => buffer.byteLength >= size);
    },
    clear() {
      kept.length = 0;
    },
  };
}
