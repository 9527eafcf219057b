/**
 * @module
 * What an operator looks at first, for the admin API and the console's overview: today's
 * busiest keys or accounts (UTC day, from the daily rollups) and each provider's health (its
 * upstream errors by code among the newest requests). Both reads are bounded: a top list of at
 * most MAX_TOP rows, and at most SCAN request-log rows read for the health figures; the answer
 * says when that cut the window short. Every refusal is a 400 naming its parameter.
 *
 * @example
 * const top = await topOfDay(deps, { by: 'key', limit: '5' }, Date.now())
 */
import type { Store } from '../store/index.ts'
import { DAY_MS, iso } from '../util/clock.ts'
import { gatewaysOwnFailure, invalidValue } from '../util/errors.ts'

export const MAX_TOP = 50
/** Request-log rows read at most for the provider figures. */
export const SCAN = 20_000
const HOUR = 3_600_000
/**
 * Whose failure a logged outcome is (DESIGN §15: a client's own mistakes are no provider's
 * errors, nor are the gateway's own). The gateway maps an upstream's own faults to 5xx
 * (502/503/504) and its rate limit to 429 `upstream_rate_limited`: the provider's; its own 500
 * and 503s (`gatewaysOwnFailure`): the gateway's. Every other 4xx — the upstream refusing what the
 * client sent (its status kept), the gateway's own checks, 499 when the client left — the client's.
 */
export function failureOf(
  status: number | null,
  code: string | null,
): 'provider' | 'client' | 'gateway' | null {
  // A request cut short by the gateway's own shutdown is nobody's failure here.
  if (code === null || status === null || code === 'shutting_down') return null
  if (gatewaysOwnFailure(code)) return 'gateway'
  if (code === 'upstream_rate_limited' || status >= 500) return 'provider'
  return status >= 400 ? 'client' : null
}

export interface OverviewDeps {
  store: Store
  config: { providers: ReadonlyArray<{ prefix: string; kind: string }> }
}

function int(param: string, v: string | undefined, dflt: number, max: number): number {
  if (v === undefined || v === '') return dflt
  const n = Number(v)
  if (!/^\d{1,6}$/.test(v) || n < 1 || n > max)
    throw invalidValue(param, `must be an integer from 1 to ${max}`)
  return n
}

/** Today's (UTC) busiest keys or accounts: requests, tokens, errors and 429s. */
export async function topOfDay(deps: OverviewDeps, q: { by?: string; limit?: string }, now: number) {
  const by = q.by ?? 'key'
  if (by !== 'key' && by !== 'account') throw invalidValue('by', "must be 'key' or 'account'")
  const limit = int('limit', q.limit, 10, MAX_TOP)
  const day = now - (now % DAY_MS)
  const rows = await deps.store.topOfDay({ day, by, limit })
  const accounts = new Map((await deps.store.listAccounts()).map((a) => [a.id, a.name]))
  const keys =
    by === 'key' ? await Promise.all(rows.map((r) => deps.store.getKey(r.id))) : rows.map(() => null)
  return {
    object: 'list' as const,
    by,
    day: iso(day),
    data: rows.map((r, i) => ({
      ...(by === 'key' ? { key_id: r.id, key_name: keys[i]?.name ?? null } : {}),
      account: accounts.get(r.accountId) ?? null,
      requests: r.requests,
      total_tokens: r.tokens,
      errors: r.errors,
      rate_limited: r.rateLimited,
    })),
  }
}

/**
 * Each configured provider's requests, upstream errors (by code; `failureOf` decides whose), the
 * client's own 4xx and 499 (`client_errors`) and the gateway's own failures while on it
 * (`gateway_errors`), both apart, and the fallbacks taken from its models, among the newest SCAN
 * requests of the last `hours`, under the provider that answered or failed last (as /metrics);
 * a 503 `upstream_circuit_open` that called nothing is no request nor error of a provider but a
 * `circuit_refused` of the requested model's. `from` is where the rows read begin (later than
 * the window's start when the cap was reached, `complete: false`).
 */
export async function providerHealth(deps: OverviewDeps, q: { hours?: string }, now: number) {
  const hours = int('hours', q.hours, 24, 168)
  const windowFrom = now - hours * HOUR
  const rows = await deps.store.recentOutcomes({ from: windowFrom, to: now + 1, scan: SCAN })
  const scanned = rows.reduce((s, r) => s + r.count, 0)
  const complete = scanned < SCAN
  const oldest = rows.reduce((m, r) => Math.min(m, r.firstAt), Number.POSITIVE_INFINITY)
  interface Health {
    provider: string
    kind: string | null
    requests: number
    upstream_errors: number
    client_errors: number
    gateway_errors: number
    fallbacks: number
    circuit_refused: number
    last_error_at: number | null
    codes: Map<string, { code: string; status: number | null; count: number; last_at: number }>
  }
  const by = new Map<string, Health>()
  const entry = (prefix: string, kind: string | null) => {
    let h = by.get(prefix)
    if (!h) {
      h = {
        provider: prefix,
        kind,
        requests: 0,
        upstream_errors: 0,
        client_errors: 0,
        gateway_errors: 0,
        fallbacks: 0,
        circuit_refused: 0,
        last_error_at: null,
        codes: new Map(),
      }
      by.set(prefix, h)
    }
    return h
  }
  for (const p of deps.config.providers) entry(p.prefix, p.kind)
  // A model id is `provider/name`; a model no longer configured still counts under its prefix.
  const prefixOf = (model: string) => {
    const slash = model.indexOf('/')
    return slash > 0 ? model.slice(0, slash) : model
  }
  for (const r of rows) {
    // A refusal (every circuit open, nothing called) is no provider's request nor error, as in
    // /metrics (switchyard_circuit_refused_total): shown apart under the model asked for.
    if (r.refused) {
      entry(prefixOf(r.model), null).circuit_refused += r.count
      continue
    }
    // The rest count under the provider that answered or failed last (a fallback's, when one did).
    const h = entry(prefixOf(r.answeredBy ?? r.model), null)
    h.requests += r.count
    // A fallback taken: counted under the provider of the model asked for, whose model failed.
    if (r.answeredBy !== null) entry(prefixOf(r.model), null).fallbacks += r.count
    const whose = failureOf(r.status, r.errorCode)
    if (whose === 'client') h.client_errors += r.count
    if (whose === 'gateway') h.gateway_errors += r.count
    if (whose !== 'provider' || r.errorCode === null) continue
    h.upstream_errors += r.count
    h.last_error_at = Math.max(h.last_error_at ?? 0, r.lastAt)
    const k = `${r.errorCode}\u0000${r.status}`
    const c = h.codes.get(k) ?? { code: r.errorCode, status: r.status, count: 0, last_at: 0 }
    c.count += r.count
    c.last_at = Math.max(c.last_at, r.lastAt)
    h.codes.set(k, c)
  }
  const data = [...by.values()]
    .sort(
      (a, b) =>
        b.upstream_errors - a.upstream_errors ||
        b.requests - a.requests ||
        a.provider.localeCompare(b.provider),
    )
    .map((h) => ({
      provider: h.provider,
      kind: h.kind,
      requests: h.requests,
      upstream_errors: h.upstream_errors,
      error_rate: h.requests ? Math.round((h.upstream_errors / h.requests) * 1000) / 1000 : 0,
      client_errors: h.client_errors,
      gateway_errors: h.gateway_errors,
      fallbacks: h.fallbacks,
      circuit_refused: h.circuit_refused,
      last_error_at: iso(h.last_error_at),
      errors_by_code: [...h.codes.values()]
        .sort((a, b) => b.count - a.count || a.code.localeCompare(b.code))
        .map((c) => ({ code: c.code, status: c.status, count: c.count, last_at: iso(c.last_at) })),
    }))
  return {
    object: 'list' as const,
    hours,
    from: iso(complete || !Number.isFinite(oldest) ? windowFrom : oldest),
    to: iso(now),
    scanned,
    complete,
    data,
  }
}
