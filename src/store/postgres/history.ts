/**
 * @module
 * The request log, usage rollups, retention and console sessions on PostgreSQL — the same
 * contract as the SQLite store (`sqlite/request-log.ts`, `sqlite/rollups.ts`): newest first with
 * a (created_at, id) cursor, at most SCAN_BUDGET index entries read per page, rollups by UTC hour
 * and day. Queries are composed from fixed fragments; every value is a bound parameter.
 */
import type { SQL } from 'bun'
import { toSeries } from '../history-series.ts'
import { SCAN_BUDGET } from '../sqlite/request-log.ts'
import type {
  ConsoleSession,
  HistoryStore,
  RateLimitedEvent,
  RequestLogFilter,
  RequestLogPage,
  RequestLogRow,
  RetentionPolicy,
  UsageSeries,
  UsageSeriesQuery,
} from '../types.ts'
import { num, numOrNull } from './accounts.ts'

const HOUR = 3_600_000
const DAY = 86_400_000
const COLUMNS = `r.id, r.request_id, r.account_id, a.name AS account_name, r.key_id, r.model, r.surface,
  r.stream, r.created_at, r.status, r.prompt_tokens, r.completion_tokens, r.latency_ms, r.ttft_ms, r.error_code`
const GROUP: Record<UsageSeriesQuery['groupBy'], string> = {
  none: "'all'",
  account: 'account_id::text',
  key: 'key_id',
  model: 'model',
  surface: 'surface',
}

const toRow = (r: Record<string, unknown>): RequestLogRow => ({
  id: num(r.id),
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
  ttftMs: numOrNull(r.ttft_ms),
  errorCode: (r.error_code as string | null) ?? null,
})

/** Numbered placeholders for `sql.unsafe(text, params)`. */
class Params {
  readonly values: unknown[] = []
  add(v: unknown): string {
    this.values.push(v)
    return `$${this.values.length}`
  }
}

export class PgHistory implements HistoryStore {
  constructor(private readonly sql: SQL) {}

  async requestLog(f: RequestLogFilter): Promise<RequestLogPage> {
    const p = new Params()
    const drive: string[] = []
    const rest: string[] = []
    // The first equality present drives the scan (as in SQLite); the others filter its entries.
    const eq: Array<[string, unknown]> = []
    if (f.keyId !== undefined) eq.push(['key_id', f.keyId])
    if (f.accountId !== undefined) eq.push(['account_id', f.accountId])
    if (f.model !== undefined) eq.push(['model', f.model])
    if (f.status !== undefined) eq.push(['status', f.status])
    const first = eq.shift()
    if (first) drive.push(`${first[0]} = ${p.add(first[1])}`)
    if (f.from !== undefined) drive.push(`created_at >= ${p.add(f.from)}`)
    if (f.to !== undefined) drive.push(`created_at < ${p.add(f.to)}`)
    if (f.cursor) drive.push(`(created_at, id) < (${p.add(f.cursor.at)}, ${p.add(f.cursor.id)})`)
    const scanWhere = drive.length ? `WHERE ${drive.join(' AND ')}` : ''
    const scanParams = p.values.length
    for (const [col, v] of eq) rest.push(`r.${col} = ${p.add(v)}`)
    if (f.surface !== undefined) rest.push(`r.surface = ${p.add(f.surface)}`)
    if (f.statusMin !== undefined)
      rest.push(`r.status BETWEEN ${p.add(f.statusMin)} AND ${p.add(f.statusMax ?? f.statusMin)}`)
    const want = f.limit + 1
    const budget = rest.length ? SCAN_BUDGET : want
    const scan = `SELECT id, created_at FROM requests ${scanWhere} ORDER BY created_at DESC, id DESC LIMIT ${p.add(budget)}`
    const rows = await this.sql.unsafe(
      `SELECT ${COLUMNS} FROM (${scan}) s JOIN requests r ON r.id = s.id LEFT JOIN accounts a ON a.id = r.account_id
       ${rest.length ? `WHERE ${rest.join(' AND ')}` : ''} ORDER BY s.created_at DESC, s.id DESC LIMIT ${p.add(want)}`,
      p.values,
    )
    const page = (rows as Array<Record<string, unknown>>).map(toRow)
    if (page.length > f.limit) {
      const kept = page.slice(0, f.limit)
      const last = kept[kept.length - 1]!
      return { rows: kept, next: { at: last.createdAt, id: last.id } }
    }
    if (!rest.length) return { rows: page, next: null }
    const tail = await this.sql.unsafe(
      `SELECT created_at, id FROM requests ${scanWhere} ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ${SCAN_BUDGET - 1}`,
      p.values.slice(0, scanParams),
    )
    const t = (tail as Array<Record<string, unknown>>)[0]
    return { rows: page, next: t ? { at: num(t.created_at), id: num(t.id) } : null }
  }

  async requestById(id: number): Promise<RequestLogRow | null> {
    const rows = await this.sql.unsafe(
      `SELECT ${COLUMNS} FROM requests r LEFT JOIN accounts a ON a.id = r.account_id WHERE r.id = $1`,
      [id],
    )
    const r = (rows as Array<Record<string, unknown>>)[0]
    return r ? toRow(r) : null
  }

  async usageSeries(q: UsageSeriesQuery): Promise<UsageSeries[]> {
    const step = q.bucket === 'hour' ? HOUR : DAY
    const from = q.from - (q.from % step)
    const p = new Params()
    const where = [`t >= ${p.add(from)}`, `t < ${p.add(q.to)}`]
    if (q.keyId !== undefined) where.push(`key_id = ${p.add(q.keyId)}`)
    if (q.accountId !== undefined) where.push(`account_id = ${p.add(q.accountId)}`)
    if (q.model !== undefined) where.push(`model = ${p.add(q.model)}`)
    const rows = (await this.sql.unsafe(
      `SELECT t, ${GROUP[q.groupBy]} AS g, SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens,
         SUM(completion_tokens) AS completion_tokens, SUM(errors) AS errors, SUM(rate_limited) AS rate_limited,
         SUM(latency_ms_sum) AS latency_ms_sum
       FROM usage_${q.bucket === 'hour' ? 'hourly' : 'daily'} WHERE ${where.join(' AND ')} GROUP BY t, g ORDER BY t`,
      p.values,
    )) as Array<Record<string, unknown>>
    const typed = rows.map((r) => ({
      t: num(r.t),
      g: String(r.g),
      requests: num(r.requests),
      prompt_tokens: num(r.prompt_tokens),
      completion_tokens: num(r.completion_tokens),
      errors: num(r.errors),
      rate_limited: num(r.rate_limited),
      latency_ms_sum: num(r.latency_ms_sum),
    }))
    return toSeries(typed, from, q.to, step)
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
    await this.sql`
      WITH v AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
        AS v(at BIGINT, account_id BIGINT, key_id TEXT, model TEXT, surface TEXT)),
      h AS (INSERT INTO usage_hourly (t, account_id, key_id, model, surface, rate_limited)
        SELECT at - at % 3600000, account_id, key_id, model, surface, COUNT(*) FROM v GROUP BY 1, 2, 3, 4, 5
        ON CONFLICT (t, account_id, key_id, model, surface) DO UPDATE SET rate_limited = usage_hourly.rate_limited + excluded.rate_limited)
      INSERT INTO usage_daily (t, account_id, key_id, model, surface, rate_limited)
        SELECT at - at % 86400000, account_id, key_id, model, surface, COUNT(*) FROM v GROUP BY 1, 2, 3, 4, 5
        ON CONFLICT (t, account_id, key_id, model, surface) DO UPDATE SET rate_limited = usage_daily.rate_limited + excluded.rate_limited`
  }

  async pruneHistory(p: RetentionPolicy): Promise<number> {
    const old = await this.sql`
      DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE created_at < ${Math.min(p.logBefore, p.logKeepAfter)}
        ORDER BY created_at LIMIT ${p.chunk})`
    const [m] = await this.sql`SELECT MAX(id) AS id FROM requests`
    const excess = await this.sql`
      DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE id <= ${num(m?.id ?? 0) - p.logMaxRows}
        AND created_at < ${p.logKeepAfter} ORDER BY id LIMIT ${p.chunk})`
    const hourly = await this.sql`
      DELETE FROM usage_hourly WHERE ctid IN (SELECT ctid FROM usage_hourly WHERE t < ${p.hourlyBefore} LIMIT ${p.chunk})`
    const daily = await this.sql`
      DELETE FROM usage_daily WHERE ctid IN (SELECT ctid FROM usage_daily WHERE t < ${p.dailyBefore} LIMIT ${p.chunk})`
    return old.count + excess.count + hourly.count + daily.count
  }

  async createSession(hash: string, s: ConsoleSession, now: number): Promise<void> {
    await this.sql`DELETE FROM console_sessions WHERE expires_at <= ${now}`
    await this.sql`
      INSERT INTO console_sessions (hash, kind, key_id, created_at, expires_at)
      VALUES (${hash}, ${s.kind}, ${s.keyId}, ${now}, ${s.expiresAt})`
  }

  async getSession(hash: string, now: number): Promise<ConsoleSession | null> {
    const [r] = await this.sql`
      SELECT kind, key_id, expires_at FROM console_sessions WHERE hash = ${hash} AND expires_at > ${now}`
    return r ? { kind: r.kind, keyId: r.key_id ?? null, expiresAt: num(r.expires_at) } : null
  }

  async deleteSession(hash: string): Promise<void> {
    await this.sql`DELETE FROM console_sessions WHERE hash = ${hash}`
  }
}
