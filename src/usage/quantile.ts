/**
 * @module
 * Quantiles from a cumulative Prometheus histogram, interpolated inside the bucket as
 * Prometheus' `histogram_quantile` does. Shared by the live endpoint and the console page (which
 * applies it to the difference between two polls, i.e. to the requests in between).
 */

export interface Bucket {
  /** Upper bound in seconds; Infinity for +Inf. */
  le: number
  /** Cumulative count of observations ≤ le. */
  count: number
}

/** q in [0, 1]; null when there are no observations. Sorted by `le` ascending. */
export function histogramQuantile(q: number, buckets: Bucket[]): number | null {
  const total = buckets[buckets.length - 1]?.count ?? 0
  if (total <= 0) return null
  const rank = q * total
  let prevLe = 0
  let prevCount = 0
  for (const b of buckets) {
    if (b.count >= rank) {
      if (b.le === Number.POSITIVE_INFINITY) return prevLe
      const inBucket = b.count - prevCount
      return inBucket <= 0 ? b.le : prevLe + ((b.le - prevLe) * (rank - prevCount)) / inBucket
    }
    prevLe = b.le
    prevCount = b.count
  }
  return prevLe
}

/** Per-bucket difference of two cumulative histograms with the same bounds (later − earlier). */
export function histogramDelta(later: Bucket[], earlier: Bucket[]): Bucket[] {
  return later.map((b, i) => ({ le: b.le, count: Math.max(0, b.count - (earlier[i]?.count ?? 0)) }))
}
