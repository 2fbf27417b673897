// The percentiles every bench scenario reports, computed one way.

/** The p-th percentile of an ascending list (nearest rank); NaN when it is empty. */
export const percentile = (sorted: ArrayLike<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** The middle of unsorted values (the upper of the two middles of an even count); NaN when there are none. */
export const median = (values: number[]) =>
  percentile(
    [...values].sort((x, y) => x - y),
    50,
  );

/** Count, mean, p50, p99 and max of unsorted values. */
export const stats = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const mean = sorted.length ? sorted.reduce((sum, value) => sum + value, 0) / sorted.length : NaN;
  return { n: sorted.length, mean, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN };
};
export type Stats = ReturnType<typeof stats>;
