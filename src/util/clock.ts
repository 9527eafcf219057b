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

export const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString())
