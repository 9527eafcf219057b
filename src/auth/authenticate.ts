/**
 * @module
 * Bearer-key authentication. 401 for anything that is not a live key (missing, malformed,
 * unknown, revoked); 403 for a known key that may not be used now. The key itself never
 * appears in a message or a log line.
 *
 * The key and its account come from `deps.authCache` (at most AUTH_CHECK_MS = 250 ms stale for a
 * change made by another process or replica, current for one made by this process); every
 * time-based fact (plan expiry, end of a suspension) is judged here against the clock.
 */
import { hashKey, looksLikeKey } from '../accounts/keys.ts'
import { currentPlan, downgradeDue, type PlanState, planState } from '../accounts/plans.ts'
import { refusal } from '../accounts/usage-report.ts'
import type { Config } from '../config/index.ts'
import { suspendedError } from '../limits/index.ts'
import type { AccountRecord, AccountStore, KeyRecord } from '../store/index.ts'
import { type Clock, iso } from '../util/clock.ts'
import { GatewayError } from '../util/errors.ts'
import { bearerToken } from '../util/key-shape.ts'
import type { AuthCache } from './cache.ts'

/** What authentication reads: the key cache, the plans, the clock, and the store for a due downgrade. */
export interface AuthDeps {
  config: Config
  clock: Clock
  authCache: AuthCache
  store: Pick<AccountStore, 'setAccountPlan'>
}

export interface Auth {
  key: KeyRecord
  account: AccountRecord
  plan: PlanState
}

const unauthorized = (message: string) =>
  new GatewayError(401, 'invalid_api_key', message, { type: 'authentication_error' })

/** The key of an Anthropic-style request: `x-api-key`, else `Authorization: Bearer`. */
export function apiKeyOrBearer(headers: Headers): string {
  const key = headers.get('x-api-key')
  if (key === null) {
    const authorization = headers.get('authorization')
    if (!authorization) {
      throw unauthorized(
        'Missing API key. Send it as "x-api-key: sk-sy-..." or "Authorization: Bearer sk-sy-...".',
      )
    }
    return bearer(authorization)
  }
  const trimmed = key.trim()
  if (!trimmed)
    throw unauthorized(
      'Empty x-api-key header. Send "x-api-key: sk-sy-..." or "Authorization: Bearer sk-sy-...".',
    )
  return trimmed
}

/**
 * Google's ways to send a key (Gemini's API): `x-goog-api-key`, else `?key=` in `url`, else a
 * bearer. The query's key never reaches a log: access lines carry the path without its query.
 */
export function googleApiKey(headers: Headers, url = ''): string {
  const key = headers.get('x-goog-api-key')?.trim()
  if (key) return key
  const q = url.indexOf('?')
  const fromQuery = q >= 0 ? new URLSearchParams(url.slice(q + 1)).get('key')?.trim() : undefined
  if (fromQuery) return fromQuery
  if (!headers.get('authorization'))
    throw unauthorized(
      'Missing API key. Send it as "x-goog-api-key: sk-sy-...", "?key=sk-sy-..." or "Authorization: Bearer sk-sy-...".',
    )
  return bearer(headers.get('authorization'))
}

export function bearer(header: string | null | undefined): string {
  if (!header) throw unauthorized('Missing API key. Send it as "Authorization: Bearer sk-sy-...".')
  const token = bearerToken(header)
  if (token === null)
    throw unauthorized('Malformed Authorization header. Use "Authorization: Bearer sk-sy-...".')
  return token
}

/**
 * Resolves the caller. With `allowRefused`, a known key that would be refused (disabled,
 * suspended, expired) still resolves, so `/v1/usage` can show `is_enabled: false`.
 */
export function authenticate(
  deps: AuthDeps,
  header: string | null | undefined,
  allowRefused = false,
): Promise<Auth> {
  return authenticateToken(deps, bearer(header), allowRefused)
}

/** `authenticate` for a key already taken from its header (`x-api-key` on the messages surface). */
export async function authenticateToken(deps: AuthDeps, token: string, allowRefused = false): Promise<Auth> {
  return authenticateNow(deps, token, allowRefused)
}

/**
 * `authenticateToken` without a promise when none is needed: a cached key whose plan has no
 * downgrade due is answered (or refused, thrown) at once — the request path's case, where an
 * `async` function cost a promise, its generator and its frame a request. A key not cached yet, or
 * a downgrade to write, returns a promise.
 */
export function authenticateNow(deps: AuthDeps, token: string, allowRefused = false): Auth | Promise<Auth> {
  const now = deps.clock.now()
  const hash = looksLikeKey(token) ? hashKey(token) : null
  const found = hash === null ? null : deps.authCache.find(hash)
  if (found instanceof Promise || (found && downgradeDue(deps.config, found.account, now)))
    return authenticateLoaded(deps, hash!, found, now, allowRefused)
  const live = liveKey(found)
  return authorized(live, planState(deps.config, live.account, now), now, allowRefused)
}

type Found = Exclude<ReturnType<AuthCache['find']>, Promise<unknown>>

async function authenticateLoaded(
  deps: AuthDeps,
  hash: string,
  pending: Found | Promise<Found>,
  now: number,
  allowRefused: boolean,
): Promise<Auth> {
  let found = pending instanceof Promise ? await pending : pending
  // The plan is about to be downgraded (a write): decide on the stored account, not on a cached
  // one another process may have downgraded already, or the history would get the change twice.
  if (found && downgradeDue(deps.config, found.account, now)) found = await deps.authCache.load(hash)
  const live = liveKey(found)
  const plan = downgradeDue(deps.config, live.account, now)
    ? await currentPlan(deps.store, deps.config, live.account, now)
    : planState(deps.config, live.account, now)
  return authorized(live, plan, now, allowRefused)
}

/** 401 for a key not found or revoked. */
function liveKey(found: Found): NonNullable<Found> {
  if (!found)
    throw unauthorized('Incorrect API key provided. Check the key, or ask the operator for a new one.')
  if (found.key.state === 'revoked')
    throw unauthorized(`API key ${found.key.prefix}… has been revoked; use another key.`)
  return found
}

/** The caller, or the 403 its key or plan gets now (unless `allowRefused`). */
function authorized(found: NonNullable<Found>, plan: PlanState, now: number, allowRefused: boolean): Auth {
  const auth = { key: found.key, account: plan.account, plan }
  if (allowRefused) return auth
  const reason = refusal(found.key, plan, now)
  if (reason) throw refusalError(reason, auth, now)
  return auth
}

/** The 403 a request with this key gets for `reason` (see `refusal` in accounts/usage-report.ts). */
export function refusalError(
  reason: string,
  auth: Pick<Auth, 'key' | 'account' | 'plan'>,
  now: number,
): GatewayError {
  switch (reason) {
    case 'key_disabled':
      return new GatewayError(
        403,
        'key_disabled',
        `API key ${auth.key.prefix}… is disabled; ask the operator to enable it.`,
      )
    case 'account_disabled':
      return new GatewayError(
        403,
        'account_disabled',
        `Account '${auth.account.name}' is disabled; contact the operator.`,
      )
    case 'key_suspended':
      return suspendedError(auth.key.prefix, auth.key.suspendedUntil, now)
    case 'plan_expired':
      return new GatewayError(
        403,
        'plan_expired',
        `The '${auth.plan.name}' plan of account '${auth.account.name}' expired at ${iso(auth.plan.expiresAt)}; ask the operator to renew it to continue.`,
      )
    default:
      return new GatewayError(
        403,
        'plan_not_configured',
        `Plan '${auth.plan.name}' is not configured on this gateway; contact the operator.`,
      )
  }
}
