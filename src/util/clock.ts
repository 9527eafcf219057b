/**
 * @module
 * The one source of time. Production uses the system clock; tests inject a `ManualClock` so
 * window and expiry tests run in milliseconds.
 */

export interface Clock {
  /** Epoch milliseconds. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** @example const clock = new ManualClock(Date.parse('2026-01-01')); clock.advance(61_000) */
export class ManualClock implements Clock {
  constructor(private t: number = Date.now()) {}
  now(): number {
    return this.t
  }
  advance(ms: number): void {
    this.t += ms
  }
  set(t: number): void {
    this.t = t
  }
}

export const DAY_MS = 86_400_000

/**
 * The latest time the gateway writes or shows: the last millisecond of year 9999. Past it ISO 8601
 * needs a six-digit year (`+010000-…`) that many clients cannot read (Python's datetime ends at
 * 9999), and past year 275760 there is no JavaScript Date at all.
 */
export const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/**
 * ISO 8601 in UTC. A time past `LATEST_TIME` (one a database got before the limit was kept, such
 * as a plan renewed 2,800 times by 100 years) reads as `LATEST_TIME`: a view never fails on it.
 */
export const iso = (t: number | null): string | null =>
  t === null ? null : new Date(Math.min(t, LATEST_TIME)).toISOString()

const ISO_DATE = /^(\d{4})-(\d\d)-(\d\d)(?=$|[T ])/

/**
 * An ISO-8601 date or time as epoch milliseconds, or null. Stricter than `Date.parse`, which
 * rolls a day that does not exist over (`2030-02-31` → March 3rd): such a date is null here.
 *
 * @example parseIsoTime('2030-01-31') // 1895875200000; parseIsoTime('2030-02-31') // null
 */
export function parseIsoTime(v: string): number | null {
  const m = ISO_DATE.exec(v)
  const ms = Date.parse(v)
  if (!m || Number.isNaN(ms)) return null
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const day = new Date(0)
  day.setUTCFullYear(y, mo - 1, d)
  return day.getUTCMonth() === mo - 1 && day.getUTCDate() === d ? ms : null
}
