/**
 * @module
 * A window's figures as every backend reports them, and as `/v1/usage` shows them.
 */
import { iso } from '../util/clock.ts'
import type { WindowLimit } from './types.ts'

/** `used` requests in the window, the oldest at `first` (null when empty); it frees at first + span. */
export function windowOf(
  limit: number | null,
  used: number,
  first: number | null,
  span: number,
): WindowLimit {
  return {
    limit,
    used,
    remaining: limit === null ? null : Math.max(0, limit - used),
    resetAt: first === null ? null : first + span,
  }
}

/** A window that is not measured on the request path (no limit). */
export function unlimited(): WindowLimit {
  return { limit: null, used: 0, remaining: null, resetAt: null }
}

/** The window after admitting one more request at `now`. */
export function consumed(w: WindowLimit, now: number, span: number): WindowLimit {
  if (w.limit === null) return w
  return {
    limit: w.limit,
    used: w.used + 1,
    remaining: w.limit - w.used - 1,
    resetAt: w.resetAt ?? now + span,
  }
}

/** The window in `/v1/usage`'s `rate_limits`. */
export const windowView = (w: WindowLimit, now: number) => ({
  limit: w.limit,
  used: w.used,
  remaining: w.remaining,
  resets_at: iso(w.resetAt),
  resets_in_ms: w.resetAt === null ? 0 : Math.max(0, w.resetAt - now),
})
