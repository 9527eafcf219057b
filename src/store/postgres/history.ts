/**
 * @module
 * The request log, usage rollups, retention and console sessions on PostgreSQL — the same
 * contract as the SQLite store (`sqlite/request-log.ts`, `sqlite/rollups.ts`): newest first with
 * a (created_at, id) cursor, at most SCAN_BUDGET index entries read per page, rollups by UTC hour
 * and day. Queries are composed from Bun.SQL fragments: every value is a bound parameter.
 */
import type { SQL } from 'bun'
import { num, numOrNull } from '../account-rows.ts'
import { toSeries } from '../history-series.ts'
import { SCAN_BUDGET } from '../sqlite/request-log.ts'
import type {
  ConsoleSession,
  HistoryStore,
  OutcomesQuery,
  OverviewStore,
  RateLimitedEvent,
  RefusalEvent,
  RefusalQuery,
  RequestLogFilter,
  RequestLogPage,
  RequestLogRow,
  RetentionPolicy,
  SessionAdminStore,
  SessionSelector,
  TopQuery,
  UsageSeries,
  UsageSeriesQuery,
} from '../types.ts'
import type { PgBound } from './bounded.ts'
import { pgRecentOutcomes, pgTopOfDay } from './overview.ts'
import { listRefusals, pruneRefusals, recordRefusals } from './refusals.ts'
import { rollupOf } from './rollups.ts'
import { pgEndSessions, pgListSessions } from './sessions.ts'

const HOUR = 3_600_000
const DAY = 86_400_000
const toRow = (r: Record<string, unknown>): RequestLogRow => ({
  id: num(r.id),
  gatewayId: String(r.gateway_id),
  requestId: String(r.request_id),
  accountId: num(r.account_id),
  accountName: (r.account_name as string | null) ?? null,
  keyId: String(r.key_id),
  model: String(r.model),
  surface: String(r.surface),
  stream: Boolean(r.stream),
  createdAt: num(r.created_at),
  status: numOrNull(r.status),
  promptTokens: numOrNull(r.prompt_tokens),
  completionTokens: numOrNull(r.completion_tokens),
  latencyMs: numOrNull(r.latency_ms),
  costMicros: numOrNull(r.cost_micros),
  attempts: numOrNull(r.attempts),
  answeredBy: (r.answered_by as string | null) ?? null,
  estimated: r.estimated === true,
  ttftMs: numOrNull(r.ttft_ms),
  errorCode: (r.error_code as string | null) ?? null,
})

export class PgHistory implements HistoryStore, OverviewStore, SessionAdminStore {
  /**
   * The minute the per-minute counters were last pruned before: their `minute < ?` deletes scan
   * the tables, so they run once a cutoff, not once a chunk (as sqlite/usage.ts's, which measured it).
   */
  private countersPrunedTo = Number.NEGATIVE_INFINITY

  constructor(private readonly db: PgBound) {}

  topOfDay = (q: TopQuery) => this.db.run((sql) => pgTopOfDay(sql, q))
  recentOutcomes = (q: OutcomesQuery) => this.db.run((sql) => pgRecentOutcomes(sql, q))

  requestLog(f: RequestLogFilter): Promise<RequestLogPage> {
    return this.db.run((sql) => requestLog(sql, f))
  }

  async requestById(id: number): Promise<RequestLogRow | null> {
    const [r] = await this.db.run(
      (sql) => sql`
      SELECT r.id, r.gateway_id, r.request_id, r.account_id, a.name AS account_name, r.key_id, r.model, r.surface,
        r.stream, r.created_at, r.status, r.prompt_tokens, r.completion_tokens, r.latency_ms, r.ttft_ms, r.error_code,
        r.cost_micros, r.attempts, r.answered_by, r.estimated
      FROM requests r LEFT JOIN accounts a ON a.id = r.account_id WHERE r.id = ${id}`,
    )
    return r ? toRow(r) : null
  }

  usageSeries(q: UsageSeriesQuery): Promise<UsageSeries[]> {
    return this.db.run((sql) => usageSeries(sql, q))
  }
  async recordRateLimited(batch: RateLimitedEvent[]): Promise<void> {
    if (!batch.length) return
    const rows = batch.map((e) => ({
      at: e.at,
      account_id: e.accountId,
      key_id: e.keyId,
      model: e.model,
      surface: e.surface,
    }))
    await this.db.run(
      (sql) => sql`
      WITH f AS (SELECT at, account_id, key_id, model, surface, 0 AS n, 0 AS p, 0 AS c, 0 AS e, 1 AS r, 0 AS l,
          0 AS m, 0 AS k, 0 AS w
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
        AS v(at BIGINT, account_id BIGINT, key_id TEXT, model TEXT, surface TEXT)),
      h AS (${rollupOf(sql, 'hour')})
      ${rollupOf(sql, 'day')}`,
    )
  }

  recordRefusals(batch: RefusalEvent[]): Promise<void> {
    return this.db.run((sql) => recordRefusals(sql, batch))
  }

  refusals(q: RefusalQuery) {
    return this.db.run((sql) => listRefusals(sql, q))
  }

  /** One bounded call per statement: each deletes at most a chunk, so each fits the bound. */
  async pruneHistory(p: RetentionPolicy): Promise<number> {
    const run = this.db.run.bind(this.db)
    // A charged row at or after `charges` stays (the budget periods' record, for a Redis rebuild).
    const charges = p.chargesKeepAfter ?? p.logKeepAfter
    const old = await run(
      (sql) => sql`
      DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE created_at < ${Math.min(p.logBefore, p.logKeepAfter)}
        AND (created_at < ${charges} OR charge_micros = 0) ORDER BY created_at LIMIT ${p.chunk})`,
    )
    const [m] = await run((sql) => sql`SELECT MAX(id) AS id FROM requests`)
    const excess = await run(
      (sql) => sql`
      DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE id <= ${num(m?.id ?? 0) - p.logMaxRows}
        AND created_at < ${p.logKeepAfter} AND (created_at < ${charges} OR charge_micros = 0)
        ORDER BY id LIMIT ${p.chunk})`,
    )
    const hourly = await run(
      (sql) => sql`
      DELETE FROM usage_hourly WHERE ctid IN (SELECT ctid FROM usage_hourly WHERE t < ${p.hourlyBefore} LIMIT ${p.chunk})`,
    )
    const daily = await run(
      (sql) => sql`
      DELETE FROM usage_daily WHERE ctid IN (SELECT ctid FROM usage_daily WHERE t < ${p.dailyBefore} LIMIT ${p.chunk})`,
    )
    // The per-minute counters go by age only, once the log's old rows are gone, once a cutoff (as
    // on SQLite: `!==`, a clock set back does not block it; marked after both deletes went, so one
    // that threw is tried again next chunk).
    const minute = Math.floor(Math.min(p.logBefore, p.logKeepAfter) / 60_000)
    if (old.count < p.chunk && minute !== this.countersPrunedTo) {
      await run((sql) => sql`DELETE FROM usage_minutes WHERE minute < ${minute}`)
      await run((sql) => sql`DELETE FROM usage_minute_outcomes WHERE minute < ${minute}`)
      this.countersPrunedTo = minute
    }
    const refusals = await run((sql) => pruneRefusals(sql, p.hourlyBefore, p.chunk))
    return old.count + excess.count + hourly.count + daily.count + refusals
  }

  async createSession(hash: string, s: ConsoleSession, now: number): Promise<void> {
    await this.db.run(async (sql) => {
      await sql`DELETE FROM console_sessions WHERE expires_at <= ${now}`
      await sql`
        INSERT INTO console_sessions (hash, kind, key_id, created_at, expires_at, binding)
        VALUES (${hash}, ${s.kind}, ${s.keyId}, ${now}, ${s.expiresAt}, ${s.binding})`
    })
  }

  async getSession(hash: string, now: number): Promise<ConsoleSession | null> {
    const [r] = await this.db.run(
      (sql) => sql`
      SELECT kind, key_id, expires_at, binding FROM console_sessions WHERE hash = ${hash} AND expires_at > ${now}`,
    )
    return r
      ? { kind: r.kind, keyId: r.key_id ?? null, expiresAt: num(r.expires_at), binding: r.binding ?? null }
      : null
  }

  async deleteSession(hash: string): Promise<void> {
    await this.db.run((sql) => sql`DELETE FROM console_sessions WHERE hash = ${hash}`)
  }

  listSessions = (now: number, limit: number) => this.db.run((sql) => pgListSessions(sql, now, limit))
  endSessions = (sel: SessionSelector) => this.db.run((sql) => pgEndSessions(sql, sel))
}

async function requestLog(sql: SQL, f: RequestLogFilter): Promise<RequestLogPage> {
  // The first equality present drives the scan (as in SQLite); the others filter its entries.
  const drive =
    f.keyId !== undefined
      ? sql`key_id = ${f.keyId}`
      : f.accountId !== undefined
        ? sql`account_id = ${f.accountId}`
        : f.model !== undefined
          ? sql`model = ${f.model}`
          : f.status !== undefined
            ? sql`status = ${f.status}`
            : sql`TRUE`
  const range = [
    f.from !== undefined ? sql`AND created_at >= ${f.from}` : sql``,
    f.to !== undefined ? sql`AND created_at < ${f.to}` : sql``,
    f.cursor ? sql`AND (created_at, id) < (${f.cursor.at}, ${f.cursor.id})` : sql``,
  ]
  const rest = [
    f.accountId !== undefined ? sql`AND r.account_id = ${f.accountId}` : sql``,
    f.keyId !== undefined ? sql`AND r.key_id = ${f.keyId}` : sql``,
    f.model !== undefined ? sql`AND r.model = ${f.model}` : sql``,
    f.status !== undefined ? sql`AND r.status = ${f.status}` : sql``,
    f.surface !== undefined ? sql`AND r.surface = ${f.surface}` : sql``,
    f.statusMin !== undefined
      ? sql`AND r.status BETWEEN ${f.statusMin} AND ${f.statusMax ?? f.statusMin}`
      : sql``,
  ]
  const want = f.limit + 1
  const rows = await sql`
    SELECT r.id, r.gateway_id, r.request_id, r.account_id, a.name AS account_name, r.key_id, r.model, r.surface,
      r.stream, r.created_at, r.status, r.prompt_tokens, r.completion_tokens, r.latency_ms, r.ttft_ms, r.error_code,
      r.cost_micros, r.attempts, r.answered_by, r.estimated
    FROM (SELECT id, created_at FROM requests WHERE ${drive} ${range}
          ORDER BY created_at DESC, id DESC LIMIT ${SCAN_BUDGET}) s
    JOIN requests r ON r.id = s.id LEFT JOIN accounts a ON a.id = r.account_id
    WHERE TRUE ${rest} ORDER BY s.created_at DESC, s.id DESC LIMIT ${want}`
  const page = (rows as Array<Record<string, unknown>>).map(toRow)
  if (page.length > f.limit) {
    const kept = page.slice(0, f.limit)
    const last = kept[kept.length - 1]!
    return { rows: kept, next: { at: last.createdAt, id: last.id } }
  }
  const [t] = await sql`
    SELECT created_at, id FROM requests WHERE ${drive} ${range}
    ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ${SCAN_BUDGET - 1}`
  return { rows: page, next: t ? { at: num(t.created_at), id: num(t.id) } : null }
}

async function usageSeries(sql: SQL, q: UsageSeriesQuery): Promise<UsageSeries[]> {
  const step = q.bucket === 'hour' ? HOUR : DAY
  const from = q.from - (q.from % step)
  const table = sql(q.bucket === 'hour' ? 'usage_hourly' : 'usage_daily')
  const filters = [
    q.keyId !== undefined ? sql`AND key_id = ${q.keyId}` : sql``,
    q.accountId !== undefined ? sql`AND account_id = ${q.accountId}` : sql``,
    q.model !== undefined ? sql`AND model = ${q.model}` : sql``,
  ]
  const rows = (await sql`
    SELECT t, CASE ${q.groupBy}::text WHEN 'account' THEN account_id::text WHEN 'key' THEN key_id
        WHEN 'model' THEN model WHEN 'surface' THEN surface ELSE 'all' END AS g,
      SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens,
      SUM(errors) AS errors, SUM(rate_limited) AS rate_limited, SUM(latency_ms_sum) AS latency_ms_sum,
      SUM(cost_micros) AS cost_micros, SUM(cached_tokens) AS cached_tokens,
      SUM(cache_write_tokens) AS cache_write_tokens
    FROM ${table} WHERE t >= ${from} AND t < ${q.to} ${filters} GROUP BY t, g ORDER BY t`) as Array<
    Record<string, unknown>
  >
  const typed = rows.map((r) => ({
    t: num(r.t),
    g: String(r.g),
    requests: num(r.requests),
    prompt_tokens: num(r.prompt_tokens),
    completion_tokens: num(r.completion_tokens),
    errors: num(r.errors),
    rate_limited: num(r.rate_limited),
    latency_ms_sum: num(r.latency_ms_sum),
    cost_micros: num(r.cost_micros),
    cached_tokens: num(r.cached_tokens),
    cache_write_tokens: num(r.cache_write_tokens),
  }))
  return toSeries(typed, from, q.to, step)
}
