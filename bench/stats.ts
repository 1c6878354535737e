/** Percentiles and the few numbers every figure reports. */

export interface Dist {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function dist(values: readonly number[]): Dist {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

export const median = (values: readonly number[]): number => percentile(Float64Array.from(values).sort(), 50);

/** `a / b`, or NaN when either is missing. */
export const ratio = (a: number | undefined, b: number | undefined): number =>
  a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? Number.NaN : a / b;
