/**
 * @module
 * A per-key sliding-window throttle kept in this process's memory, for calls that are cheap but
 * must not be hammered (count_tokens): at most `limit` calls in any `windowMs`, however they fall
 * across clock seconds, with a burst of `limit` at once allowed. A fixed window let a client make
 * twice its rate across a window's edge; a token bucket of the same burst lets through about
 * twice as many in a window as well (the burst, then the refill).
 *
 * Each key keeps the times of its last `limit` admitted calls in a ring: a call is admitted when
 * the oldest of them is a window old, so a call costs O(1) and a key `limit` numbers. A refused
 * call is not recorded. Keys live in two generations a window each: a key called moves to the
 * current one, and when a window has passed the older generation is dropped whole — its keys were
 * last called more than a window ago, so they can refuse nothing. Memory is the keys called in the
 * last two windows, and at most `maxKeys`: past it the generations turn early, which hands a key a
 * fresh window only when more than `maxKeys` keys are called within two windows. No call walks
 * the keys.
 *
 * @example
 * const log = new SlidingLog({ limit: 20, windowMs: 1000, maxKeys: 10_000 })
 * const waitMs = log.take(key.id, Date.now())
 * if (waitMs > 0) refuse(waitMs)
 */

export interface SlidingLogPolicy {
  /** Calls admitted in any window. */
  limit: number
  windowMs: number
  /** Keys remembered at most. */
  maxKeys: number
}

interface Ring {
  /** Times of the last `limit` admitted calls (-Infinity: none yet); `next` is the oldest. */
  times: Float64Array
  next: number
}

export class SlidingLog {
  private current = new Map<string, Ring>()
  private previous = new Map<string, Ring>()
  private since = Number.NEGATIVE_INFINITY

  constructor(readonly policy: Readonly<SlidingLogPolicy>) {}

  /** Admits one call of `key` at `nowMs`: 0, else milliseconds until one would be admitted. */
  take(key: string, nowMs: number): number {
    const { limit, windowMs, maxKeys } = this.policy
    if (nowMs - this.since >= windowMs) this.turn(nowMs)
    let ring = this.current.get(key)
    if (!ring) {
      ring = this.previous.get(key)
      if (ring) this.previous.delete(key)
      else {
        if (this.current.size + this.previous.size >= maxKeys) this.turn(nowMs)
        ring = { times: new Float64Array(limit).fill(Number.NEGATIVE_INFINITY), next: 0 }
      }
      this.current.set(key, ring)
    }
    const oldest = ring.times[ring.next]!
    if (nowMs - oldest < windowMs) return Math.max(1, Math.ceil(oldest + windowMs - nowMs))
    ring.times[ring.next] = nowMs
    ring.next = (ring.next + 1) % limit
    return 0
  }

  /** Keys remembered now. */
  get size(): number {
    return this.current.size + this.previous.size
  }

  /** Drops the older generation; the current one becomes it. */
  private turn(nowMs: number): void {
    this.previous = this.current
    this.current = new Map()
    this.since = nowMs
  }
}
