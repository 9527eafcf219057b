/**
 * @module
 * Anthropic's rate-limit header names beside OpenAI's: `anthropic-ratelimit-requests-limit`,
 * `-remaining` and `-reset` (RFC 3339: when the next request slot frees) for the tightest window
 * that has a limit — the minute window unless only a daily limit is set.
 */
import type { AdmitResult } from '../../store/index.ts'

export function anthropicLimitHeaders(admit: AdmitResult, now: number, into: Record<string, string>): void {
  const w = admit.minute.limit !== null ? admit.minute : admit.day
  if (w.limit === null) return
  into['anthropic-ratelimit-requests-limit'] = String(w.limit)
  into['anthropic-ratelimit-requests-remaining'] = String(w.remaining)
  into['anthropic-ratelimit-requests-reset'] = new Date(w.resetAt ?? now).toISOString()
}
