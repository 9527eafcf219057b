/**
 * @module
 * Reading usage history for the admin API and the console: query parameters → store filters
 * (every refusal a 400 naming the parameter), store rows → the JSON the API answers with.
 *
 * @example
 * const page = await requestLogPage(deps, { account: 'alice', status: '5xx', limit: '50' })
 */
import { fromCursor, notACursor, pageLimit, toCursor } from '../accounts/list-page.ts'
import type { AccountService } from '../accounts/service.ts'
import { microsToUsd } from '../limits/pricing.ts'
import type { RequestLogFilter, RequestLogRow, SeriesGroup, Store, UsageSeriesQuery } from '../store/index.ts'
import { iso, parseIsoTime } from '../util/clock.ts'
import { invalidValue } from '../util/errors.ts'

/** The request log's page when none is asked for (its limit, its cursor's refusal: list-page.ts). */
const DEFAULT_PAGE = 50
const HOUR = 3_600_000
const DAY = 86_400_000
/** Longest span one series answer covers, per bucket (about 3 months of hours, 5 years of days). */
const MAX_SPAN = { hour: 93 * DAY, day: 1830 * DAY }
const GROUPS: readonly SeriesGroup[] = ['none', 'account', 'key', 'model', 'surface']

/** An instant as ISO-8601 or epoch milliseconds. */
export function parseTime(param: string, v: string | undefined): number | undefined {
  if (v === undefined || v === '') return undefined
  const t = /^\d{1,15}$/.test(v) ? Number(v) : parseIsoTime(v)
  // A day that does not exist (`2026-02-31`) is refused, not rolled over into the next month.
  if (t === null || !Number.isFinite(t))
    throw invalidValue(param, `'${v}' is not an ISO-8601 time (of a day that exists) or epoch milliseconds`)
  return t
}

/** `200`, or a class: `2xx`, `4xx`, `5xx`. */
function parseStatus(v: string | undefined): Pick<RequestLogFilter, 'status' | 'statusMin' | 'statusMax'> {
  if (v === undefined || v === '') return {}
  if (/^[1-5]\d\d$/.test(v)) return { status: Number(v) }
  const m = /^([1-5])xx$/i.exec(v)
  if (m) return { statusMin: Number(m[1]) * 100, statusMax: Number(m[1]) * 100 + 99 }
  throw invalidValue('status', `'${v}' is not a status (e.g. 502) or a class (2xx, 4xx, 5xx)`)
}

export const encodeCursor = (c: { at: number; id: number }) => toCursor(`${c.at}.${c.id}`)

function decodeCursor(v: string | undefined): RequestLogFilter['cursor'] {
  if (v === undefined || v === '') return undefined
  const m = /^(\d{1,15})\.(\d{1,15})$/.exec(fromCursor(v))
  if (!m) throw notACursor()
  return { at: Number(m[1]), id: Number(m[2]) }
}

export interface LogQuery {
  account?: string
  key?: string
  model?: string
  surface?: string
  status?: string
  from?: string
  to?: string
  cursor?: string
  limit?: string
}

export interface HistoryDeps {
  store: Store
  accounts: AccountService
}

export function requestView(r: RequestLogRow) {
  return {
    id: r.id,
    gateway_id: r.gatewayId,
    request_id: r.requestId,
    created_at: iso(r.createdAt),
    account: r.accountName,
    account_id: r.accountId,
    key_id: r.keyId,
    model: r.model,
    surface: r.surface,
    stream: r.stream,
    status: r.status,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    total_tokens:
      r.promptTokens === null && r.completionTokens === null
        ? null
        : (r.promptTokens ?? 0) + (r.completionTokens ?? 0),
    latency_ms: r.latencyMs,
    ttft_ms: r.ttftMs,
    error_code: r.errorCode,
    /** At the model's pricing; 0 for a free model, null while unknown (in flight, or lost). */
    cost_usd: r.costMicros === null ? null : microsToUsd(r.costMicros),
    attempts: r.attempts,
    answered_by: r.answeredBy,
    /** The tokens and cost are the gateway's settled estimate (no usage from the upstream), DESIGN §11. */
    estimated: r.estimated,
  }
}

/** `fixedAccountId` pins the page to one account (a key holder's own view). */
export async function requestLogPage(deps: HistoryDeps, q: LogQuery, fixedAccountId?: number) {
  const filter: RequestLogFilter = {
    limit: pageLimit(q.limit, DEFAULT_PAGE),
    cursor: decodeCursor(q.cursor),
    from: parseTime('from', q.from),
    to: parseTime('to', q.to),
    ...parseStatus(q.status),
  }
  if (fixedAccountId !== undefined) filter.accountId = fixedAccountId
  else if (q.account) filter.accountId = (await deps.accounts.getAccount(q.account)).id
  if (q.key) filter.keyId = q.key
  if (q.model) filter.model = q.model
  if (q.surface) filter.surface = q.surface
  const page = await deps.store.requestLog(filter)
  return {
    object: 'list' as const,
    data: page.rows.map(requestView),
    next_cursor: page.next ? encodeCursor(page.next) : null,
  }
}

export interface SeriesParams {
  bucket?: string
  from?: string
  to?: string
  account?: string
  key?: string
  model?: string
  group_by?: string
}

export async function usageSeries(deps: HistoryDeps, p: SeriesParams, now: number, fixedAccountId?: number) {
  const bucket = p.bucket ?? 'hour'
  if (bucket !== 'hour' && bucket !== 'day') throw invalidValue('bucket', "must be 'hour' or 'day'")
  const step = bucket === 'hour' ? HOUR : DAY
  const to = parseTime('to', p.to) ?? now - (now % step) + step
  const from = parseTime('from', p.from) ?? to - (bucket === 'hour' ? 24 * HOUR : 30 * DAY)
  if (from >= to) throw invalidValue('from', 'must be before to')
  if (to - from > MAX_SPAN[bucket])
    throw invalidValue('from', `one answer covers at most ${MAX_SPAN[bucket] / DAY} days of ${bucket}s`)
  const groupBy = (p.group_by ?? 'none') as SeriesGroup
  if (!GROUPS.includes(groupBy)) throw invalidValue('group_by', `must be one of ${GROUPS.join(', ')}`)
  const q: UsageSeriesQuery = { bucket, from, to, groupBy }
  if (fixedAccountId !== undefined) q.accountId = fixedAccountId
  else if (p.account) q.accountId = (await deps.accounts.getAccount(p.account)).id
  if (p.key) q.keyId = p.key
  if (p.model) q.model = p.model
  const series = await deps.store.usageSeries(q)
  const names = groupBy === 'account' ? await accountNames(deps) : null
  return {
    object: 'usage.series' as const,
    bucket,
    from: iso(from - (from % step)),
    to: iso(to),
    group_by: groupBy,
    series: series.map((s) => ({
      group: names?.get(s.group) ?? s.group,
      points: s.points.map((pt) => ({
        t: iso(pt.t),
        requests: pt.requests,
        prompt_tokens: pt.prompt_tokens,
        completion_tokens: pt.completion_tokens,
        total_tokens: pt.prompt_tokens + pt.completion_tokens,
        errors: pt.errors,
        rate_limited: pt.rate_limited,
        avg_latency_ms: pt.requests ? Math.round(pt.latency_ms_sum / pt.requests) : null,
        cost_usd: microsToUsd(pt.cost_micros),
        // Of prompt_tokens: read from the provider's prompt cache, and written to it.
        cached_tokens: pt.cached_tokens,
        cache_write_tokens: pt.cache_write_tokens,
      })),
    })),
  }
}

async function accountNames(deps: HistoryDeps): Promise<Map<string, string>> {
  return new Map((await deps.store.listAccounts()).map((a) => [String(a.id), a.name]))
}
