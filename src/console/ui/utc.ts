/**
 * @module
 * Chart times in UTC, whatever the browser's time zone: the usage buckets are UTC hours and days,
 * so the axis, the hover legend and the data table name them in UTC. uPlot's own time axis works
 * on local `Date`s (its `tzDate` shifts them, which slips an hour near a DST change), so the x
 * axis here is plain epoch arithmetic: UTC has no DST and every step below divides a UTC day
 * (or is whole days), so multiples of a step from the epoch are whole UTC hours and midnights.
 *
 * @example
 * utcStamp(1_795_773_600, 'minute') // '2026-11-27 10:00'
 */

const M = 60
const H = 3600
const D = 86_400

/** The x axis's tick steps, seconds: seconds, minutes and hours that divide a day, then days. */
export const UTC_STEPS = [
  ...[1, 2, 5, 10, 15, 30],
  ...[1, 2, 5, 10, 15, 30].map((n) => n * M),
  ...[1, 2, 3, 4, 6, 8, 12].map((n) => n * H),
  ...[1, 2, 7, 14, 28].map((n) => n * D),
]

export type Precision = 'day' | 'minute' | 'second'

const iso = (t: number) => new Date(t * 1000).toISOString()

/** `2026-11-27`, `2026-11-27 10:00` or `2026-11-27 10:00:05`: a bucket or reading, in UTC. */
export function utcStamp(t: number, precision: Precision): string {
  const s = iso(t)
  return precision === 'day' ? s.slice(0, 10) : s.slice(0, precision === 'minute' ? 16 : 19).replace('T', ' ')
}

/** The ticks between `min` and `max`: the multiples of `step` (uPlot's axis `splits`). */
export function utcSplits(min: number, max: number, step: number): number[] {
  const out: number[] = []
  for (let t = Math.ceil(min / step) * step; t <= max; t += step) out.push(t)
  return out
}

/**
 * Tick labels: `MM-DD` for steps of days; else `HH:MM` (`HH:MM:SS` under a minute), with the
 * date on a second line at the first tick and where the day changes.
 */
export function utcTicks(ticks: number[], step: number): string[] {
  return ticks.map((t, i) => {
    const s = iso(t)
    const date = s.slice(5, 10)
    if (step >= D) return date
    const time = s.slice(11, step < M ? 19 : 16)
    const newDay = i === 0 || iso(ticks[i - 1]!).slice(0, 10) !== s.slice(0, 10)
    return newDay ? `${time}\n${date}` : time
  })
}
