/**
 * @module
 * A per-key token bucket kept in this process's memory, for cheap endpoints that must still not
 * be hammered (`GET /v1/usage`): `burst` calls at once, then `perMinute` a minute. With
 * `serve --workers N` each process keeps its own buckets, so a client spread over all of them
 * gets up to N times the rate.
 *
 * Memory is bounded: at most `maxKeys` buckets; beyond that the least recently refilled is
 * forgotten, which only hands that key a fresh burst.
 *
 * @example
 * const buckets = new TokenBuckets(clock, { perMinute: 60, burst: 20, maxKeys: 10_000 })
 * const waitMs = buckets.take(key.id)
 * if (waitMs > 0) refuse(waitMs)
 */
import type { Clock } from '../util/clock.ts'

export interface BucketPolicy {
  perMinute: number
  burst: number
  maxKeys: number
}

interface Bucket {
  tokens: number
  at: number
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>()

  constructor(
    private readonly clock: Clock,
    readonly policy: Readonly<BucketPolicy>,
  ) {}

  /** Takes one token for `key`: 0 when it was there, else milliseconds until one will be. */
  take(key: string): number {
    const now = this.clock.now()
    const { perMinute, burst, maxKeys } = this.policy
    const b = this.buckets.get(key)
    let tokens = burst
    if (b) {
      tokens = Math.min(burst, b.tokens + ((now - b.at) * perMinute) / 60_000)
      this.buckets.delete(key) // re-inserted at the back: the map stays in refill order
    } else if (this.buckets.size >= maxKeys) {
      this.buckets.delete(this.buckets.keys().next().value!)
    }
    if (tokens < 1) {
      this.buckets.set(key, { tokens, at: now })
      return Math.ceil(((1 - tokens) * 60_000) / perMinute)
    }
    this.buckets.set(key, { tokens: tokens - 1, at: now })
    return 0
  }

  get size(): number {
    return this.buckets.size
  }
}
