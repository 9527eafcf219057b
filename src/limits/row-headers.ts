/**
 * @module
 * Rate-limit response headers built from the rows' states (DESIGN §5, §11), the same rows the
 * backend checked: OpenAI's `x-ratelimit-{limit,remaining,reset}-requests` and `-tokens` for the
 * minute window and the same with `-day`; Anthropic's `anthropic-ratelimit-requests-*` and
 * `anthropic-ratelimit-tokens-*` (the minute window unless only a daily one is set, reset as
 * RFC 3339). Where the account and the key both limit a measure, the one with less left is shown.
 * The request headers are byte for byte those of `headers.ts` (`rateLimitHeaders`).
 */
import { formatDuration } from './headers.ts'
import { bindingState, type LimitResource, type LimitWindow, type RowState } from './rows.ts'

/** Each measure's row and its three header names (built once, not per response). */
const OPENAI: [LimitResource, LimitWindow, string, string, string][] = (
  [
    ['requests', 'minute', 'requests'],
    ['requests', 'day', 'requests-day'],
    ['tokens', 'minute', 'tokens'],
    ['tokens', 'day', 'tokens-day'],
  ] as const
).map(([resource, window, name]) => [
  resource,
  window,
  `x-ratelimit-limit-${name}`,
  `x-ratelimit-remaining-${name}`,
  `x-ratelimit-reset-${name}`,
])

/** OpenAI's headers for every measure a row limits, added to `h`. `now`: the time the backend decided at. */
export function rowHeaders(
  states: RowState[],
  now: number,
  h: Record<string, string> = {},
): Record<string, string> {
  for (const [resource, window, limit, remaining, reset] of OPENAI) {
    const s = bindingState(states, resource, window)
    if (!s) continue
    h[limit] = String(s.row.capacity)
    h[remaining] = String(s.remaining)
    h[reset] = formatDuration(s.resetAt === null ? 0 : s.resetAt - now)
  }
  return h
}

/** Anthropic's headers (Messages), added to `into`. */
export function anthropicRowHeaders(states: RowState[], now: number, into: Record<string, string>): void {
  for (const resource of ['requests', 'tokens'] as const) {
    const s = bindingState(states, resource, 'minute') ?? bindingState(states, resource, 'day')
    if (!s) continue
    into[`anthropic-ratelimit-${resource}-limit`] = String(s.row.capacity)
    into[`anthropic-ratelimit-${resource}-remaining`] = String(s.remaining)
    into[`anthropic-ratelimit-${resource}-reset`] = new Date(s.resetAt ?? now).toISOString()
  }
}
