/**
 * @module
 * Rate-limit response headers (OpenAI's names, plus a `-day` set) and the 429 error.
 * `x-ratelimit-reset-requests[-day]` is the time until the next request slot frees in that
 * window (when its oldest admitted request leaves it), in OpenAI's duration format ("6m0s").
 */

import { windowName } from '../config/limit-settings.ts'
import { GatewayError } from '../util/errors.ts'
import { bindingState, type RowState } from './rows.ts'
import type { AdmitResult, WindowLimit } from './types.ts'

/** Go-style duration like OpenAI's headers: "20ms", "1.5s", "6m0s", "23h59m59s". */
export function formatDuration(ms: number): string {
  ms = Math.max(0, Math.ceil(ms))
  if (ms < 1000) return `${ms}ms`
  const h = Math.floor(ms / 3_600_000)
  const m = Math.floor((ms % 3_600_000) / 60_000)
  const sec = seconds(ms % 60_000)
  if (h) return `${h}h${m}m${sec}`
  if (m) return `${m}m${sec}`
  return sec
}

/** Whole milliseconds under a minute as Go prints seconds: "7s", "7.5s", "7.25s", "7.125s". */
function seconds(ms: number): string {
  const whole = Math.floor(ms / 1000)
  const frac = ms % 1000
  if (frac === 0) return `${whole}s`
  if (frac % 100 === 0) return `${whole}.${frac / 100}s`
  if (frac % 10 === 0) return `${whole}.${frac < 100 ? '0' : ''}${frac / 10}s`
  return `${whole}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}s`
}

/** A window's figures as the request headers show them. */
export interface RequestWindow {
  limit: number
  remaining: number
  resetAt: number | null
}

/** The account's request windows (an admission's, or read without one) and when they were read. */
export interface Windows {
  minute: WindowLimit
  day: WindowLimit
  at?: number
}

/** The rows' states an admission reports: what it charged, or the row that refused it. */
export function admitStates(r: AdmitResult): RowState[] | undefined {
  return r.admitted ? r.reservation?.states : r.charge && [r.charge.state]
}

/**
 * The request window the headers show for `window`: the account's, or the key's own request row
 * (DESIGN §11, per-key limits) when that leaves less (the account's on a tie); null when neither
 * limits it. The same choice as the token headers' (`rowHeaders`).
 */
export function requestWindow(
  r: Windows,
  states: RowState[] | undefined,
  window: 'minute' | 'day',
): RequestWindow | null {
  const w = window === 'minute' ? r.minute : r.day
  const key = states && bindingState(states, 'requests', window)
  if (key && (w.limit === null || key.remaining < w.remaining!))
    return { limit: key.row.capacity, remaining: key.remaining, resetAt: key.resetAt }
  return w.limit === null ? null : { limit: w.limit, remaining: w.remaining!, resetAt: w.resetAt }
}

function put(h: Record<string, string>, suffix: string, w: RequestWindow | null, now: number): void {
  if (w === null) return
  h[`x-ratelimit-limit-requests${suffix}`] = String(w.limit)
  h[`x-ratelimit-remaining-requests${suffix}`] = String(w.remaining)
  h[`x-ratelimit-reset-requests${suffix}`] = formatDuration(w.resetAt === null ? 0 : w.resetAt - now)
}

/** `now` is the caller's clock; a limiter that decided on its engine's clock reports that time. */
export function rateLimitHeaders(
  r: Windows,
  states: RowState[] | undefined,
  callerNow: number,
): Record<string, string> {
  const now = r.at ?? callerNow
  const h: Record<string, string> = {}
  put(h, '', requestWindow(r, states, 'minute'), now)
  put(h, '-day', requestWindow(r, states, 'day'), now)
  return h
}

export function rateLimitError(
  r: Extract<AdmitResult, { admitted: false }>,
  callerNow: number,
  headers: Record<string, string>,
): GatewayError {
  const now = r.at ?? callerNow
  const ms = Math.max(1, r.retryAt - now)
  const w = r.window === 'minute' ? r.minute : r.day
  const name = windowName('requests', r.window)
  const suspended = r.suspendedUntil
    ? ` This key is now suspended for ${Math.ceil((r.suspendedUntil - now) / 1000)} s after repeated refused requests (rate limits, budget, invalid requests).`
    : ''
  return new GatewayError(
    429,
    'rate_limit_exceeded',
    `Rate limit reached for ${name}: limit ${w.limit}, used ${w.used}. The next request is admitted in ${(ms / 1000).toFixed(3)} s; retry after that or upgrade the plan.${suspended}`,
    { headers: { ...headers, 'retry-after': String(Math.ceil(ms / 1000)), 'retry-after-ms': String(ms) } },
  )
}
