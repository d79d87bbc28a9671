/**
 * Where a slice of `text` from `start`, at most `size` code units long, ends: one unit short
 * rather than between the halves of a surrogate pair, which an encoder would make two U+FFFD of
 * and JSON.stringify two escapes. Never at `start` itself: a slice holds a unit at least.
 */
export function sliceEnd(text: string, start: number, size: number): number {
  const end = Math.min(text.length, start + size);
  const last = text.charCodeAt(end - 1);
  return end < text.length && end - 1 > start && last >= 0xd800 && last <= 0xdbff ? end - 1 : end;
}
