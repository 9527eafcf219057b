/**
 * @module
 * How long to wait before trying a target again: the upstream's own word (`retry-after-ms`, as
 * OpenAI sends it, then `retry-after` in seconds or as an HTTP date) when it is within
 * `max_retry_after_s`, else an exponential backoff with jitter under `max_backoff_ms`. The jitter
 * keeps at least half of each step, so no two retries are ever a tight loop, and spreads the
 * gateway's retries so a pool of requests that failed together does not return together.
 *
 * @example
 * const policy = { attempts: 2, backoffMs: 250, maxBackoffMs: 4000, maxRetryAfterS: 10 }
 * retryAfterMs(res.headers, Date.now())       // 1500 for `retry-after-ms: 1500`, null when absent
 * backoffMs(0, policy)                        // in [125, 250]; retry 1: [250, 500]; … at most 4000
 * waitsFor(30_000, policy)                   // false: longer than max_retry_after_s, fail over
 */

/** `retry` of a provider, resolved (milliseconds and seconds as the config names them). */
export interface RetryPolicy {
  /** Retries after the first try, per target. */
  attempts: number
  backoffMs: number
  maxBackoffMs: number
  maxRetryAfterS: number
}

export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({
  attempts: 2,
  backoffMs: 250,
  maxBackoffMs: 4000,
  maxRetryAfterS: 10,
})

interface HeaderSource {
  get(name: string): string | null
}

/**
 * The upstream's requested wait in milliseconds (≥ 0); null when it sent neither header or an
 * unreadable one. `retry-after-ms` wins: it is the more precise of the two when both are sent.
 */
export function retryAfterMs(headers: HeaderSource, now: number): number | null {
  const ms = headers.get('retry-after-ms')?.trim()
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms))
  const v = headers.get('retry-after')?.trim()
  if (!v) return null
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000)
  // An HTTP date names a weekday and a month; a bare number or a word is not one.
  if (!/[A-Za-z]{3}/.test(v)) return null
  const at = Date.parse(v)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

/**
 * The wait before retry number `retry` (0 for the first retry): `backoffMs · 2^retry` capped at
 * `maxBackoffMs`, of which a random half is taken off (equal jitter). `random` is injectable for tests.
 */
export function backoffMs(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const step = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** Math.min(retry, 30))
  return Math.round(step / 2 + (random() * step) / 2)
}

/**
 * Whether a wait of `ms` before retrying a target (its `retry-after`, or a rested key's wake) is
 * one to take: within `max_retry_after_s`; a longer one means fail over instead.
 */
export const waitsFor = (ms: number, policy: RetryPolicy): boolean => ms <= policy.maxRetryAfterS * 1000
