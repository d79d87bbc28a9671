/**
 * `report` at most once per `everyMs`, told how many calls it skipped since the last: a dependency
 * that stays down (a reconnect loop fails every few hundred ms) gets a log line every few seconds, not a flood.
 */
export function throttled<T>(report: (value: T, skipped: number) => void, everyMs = 5_000): (value: T) => void {
  let last = -Infinity;
  let skipped = 0;
  return (value) => {
    const now = Date.now();
    if (now - last < everyMs) {
      skipped++;
      return;
    }
    last = now;
    report(value, skipped);
    skipped = 0;
  };
}
