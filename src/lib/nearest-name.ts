/**
 * The known name nearest to one that was not found, for "did you mean" hints in API errors and
 * the CLI: the fewest single-character edits (insert, delete, replace, swap two neighbours),
 * case ignored, within a third of the name's length (at least one edit, at most three).
 */
export function nearestName(given: string, names: Iterable<string>): string | undefined {
  const wanted = given.toLowerCase();
  const allowed = Math.min(3, Math.max(1, Math.floor(wanted.length / 3)));
  let best: string | undefined;
  let bestDistance = allowed + 1;
  for (const name of names) {
    const distance = editDistance(wanted, name.toLowerCase(), bestDistance);
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance, or `limit` once it is sure to reach it. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowBest = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, beforePrevious[j - 2]! + 1);
      current.push(value);
      rowBest = Math.min(rowBest, value);
    }
    if (rowBest >= limit) return limit;
    beforePrevious = previous;
    previous = current;
  }
  return Math.min(previous[b.length]!, limit);
}
