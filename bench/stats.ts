/** Nearest-rank percentile of an ascending-sorted sample; NaN when empty. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface Percentiles {
  p50: number;
  p99: number;
}

/** p50 and p99 of a sample (the sample is copied, not reordered). */
export function percentiles(values: Float64Array): Percentiles {
  const sorted = Float64Array.from(values).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** Milliseconds with three decimals; "n/a" for a missing value. */
export function ms(value: number | undefined): string {
  return value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(3);
}
