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
import { bindingState, binds, type RowState } from './rows.ts'

/** Each measure's three header names, in the order of `slot` (built once, not per response). */
const OPENAI: [string, string, string][] = ['requests', 'requests-day', 'tokens', 'tokens-day'].map(
  (name) => [`x-ratelimit-limit-${name}`, `x-ratelimit-remaining-${name}`, `x-ratelimit-reset-${name}`],
)

/** A measure's place in `OPENAI`: requests 0-1, tokens 2-3, the day after the minute; -1: no header. */
function slot(s: RowState): number {
  const r = s.row
  const base = r.resource === 'requests' ? 0 : r.resource === 'tokens' ? 2 : -1
  if (base < 0 || r.window === 'period') return -1
  return r.window === 'minute' ? base : base + 1
}

/**
 * OpenAI's headers for every measure a row limits, added to `h`, in one pass over the states
 * (the binding one per measure, as `bindingState` picks it). `now`: the time the backend decided
 * at. `tokensOnly`: the request measures are left to the account's windows (`rateLimitHeaders`).
 */
export function rowHeaders(
  states: RowState[],
  now: number,
  h: Record<string, string> = {},
  tokensOnly = false,
): Record<string, string> {
  const binding: (RowState | undefined)[] = [undefined, undefined, undefined, undefined]
  for (const s of states) {
    const i = slot(s)
    if (i < 0 || (tokensOnly && i < 2)) continue
    if (binds(s, binding[i])) binding[i] = s
  }
  for (let i = 0; i < 4; i++) {
    const s = binding[i]
    if (!s) continue
    // Indexed, not destructured: no iterator a header row.
    const names = OPENAI[i]!
    h[names[0]] = String(s.row.capacity)
    h[names[1]] = String(s.remaining)
    h[names[2]] = formatDuration(s.resetAt === null ? 0 : s.resetAt - now)
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
