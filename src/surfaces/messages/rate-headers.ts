/**
 * @module
 * Anthropic's rate-limit header names beside OpenAI's: `anthropic-ratelimit-requests-limit`,
 * `-remaining` and `-reset` (RFC 3339: when the next request slot frees) for the tightest window
 * that has a limit — the minute window unless only a daily limit is set; of the account's and the
 * key's own, the one with less left — and the same for tokens
 * (`anthropic-ratelimit-tokens-*`) where the plan or the key limits them.
 */
import { requestWindow, type Windows } from '../../limits/headers.ts'
import { anthropicRowHeaders } from '../../limits/row-headers.ts'
import type { RowState } from '../../limits/rows.ts'

export function anthropicLimitHeaders(
  windows: Windows,
  states: RowState[] | undefined,
  now: number,
  into: Record<string, string>,
): void {
  // Token rows (DESIGN §11): anthropic-ratelimit-tokens-*, from the rows the admission charged.
  if (states)
    anthropicRowHeaders(
      states.filter((s) => s.row.resource === 'tokens'),
      now,
      into,
    )
  const w = requestWindow(windows, states, 'minute') ?? requestWindow(windows, states, 'day')
  if (w === null) return
  into['anthropic-ratelimit-requests-limit'] = String(w.limit)
  into['anthropic-ratelimit-requests-remaining'] = String(w.remaining)
  into['anthropic-ratelimit-requests-reset'] = new Date(w.resetAt ?? now).toISOString()
}
