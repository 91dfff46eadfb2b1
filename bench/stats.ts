/** Exact order statistics over all samples (no histogram rounding: the differences are small). */
export interface Distribution {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export function summarize(values: ArrayLike<number>): Distribution | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    mean: sum / sorted.length,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1],
  };
}

export function median(values: number[]): number {
  return percentile(Float64Array.from(values).sort(), 0.5);
}

/** a − b where both are known; null otherwise. */
export function minus(a: number | null | undefined, b: number | null | undefined): number | null {
  return a === null ||
    a === undefined ||
    b === null ||
    b === undefined ||
    !Number.isFinite(a) ||
    !Number.isFinite(b)
    ? null
    : a - b;
}
