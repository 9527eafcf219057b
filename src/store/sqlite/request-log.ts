/**
 * @module
 * The request log, newest first, with a cursor on (created_at, id). One index drives each query
 * (key, account, model, exact status, or time alone), read backwards from the cursor; the other
 * filters are checked on at most `SCAN_BUDGET` entries of it per page. So every page costs a
 * bounded index range read whatever the log's size or the filters' rarity — a rare combination
 * gets a partial page whose cursor continues where the scan stopped.
 *
 * One constant statement per driving index; filters that are not set are bound as NULL.
 */
import type { Database } from 'bun:sqlite'
import type { RequestLogFilter, RequestLogPage, RequestLogRow } from '../types.ts'

/** Index entries one page may read. */
export const SCAN_BUDGET = 2000
/** Bounds that leave a range open (epoch ms and ids stay far below). */
const FAR = 9e15

interface Row {
  id: number
  gateway_id: string
  request_id: string
  account_id: number
  account_name: string | null
  key_id: string
  model: string
  surface: string
  stream: number
  created_at: number
  status: number | null
  prompt_tokens: number | null
  completion_tokens: number | null
  latency_ms: number | null
  ttft_ms: number | null
  error_code: string | null
  cost_micros: number | null
  attempts: number | null
  answered_by: string | null
  estimated: number
}

type Driver = 'key' | 'account' | 'model' | 'status' | 'time'

/** Index and equality of each driver (constants: no value is ever part of the SQL text). */
const DRIVERS: Record<Driver, { index: string; equal: string }> = {
  key: { index: 'requests_key_time', equal: 'key_id = $key' },
  account: { index: 'requests_account_time', equal: 'account_id = $account' },
  model: { index: 'requests_model_time', equal: 'model = $model' },
  status: { index: 'requests_status_time', equal: 'status = $status' },
  time: { index: 'requests_time', equal: '1' },
}

const COLUMNS = `r.id, r.gateway_id, r.request_id, r.account_id, a.name AS account_name, r.key_id, r.model, r.surface,
  r.stream, r.created_at, r.status, r.prompt_tokens, r.completion_tokens, r.latency_ms, r.ttft_ms, r.error_code, r.cost_micros,
  r.attempts, r.answered_by, r.estimated`
const RANGE = '$from <= created_at AND created_at < $to AND (created_at, id) < ($at, $id)'
const REST = `($account IS NULL OR r.account_id = $account) AND ($key IS NULL OR r.key_id = $key)
  AND ($model IS NULL OR r.model = $model) AND ($surface IS NULL OR r.surface = $surface)
  AND ($status IS NULL OR r.status = $status) AND ($smin IS NULL OR r.status BETWEEN $smin AND $smax)`

const scanOf = (d: { index: string; equal: string }) =>
  `FROM requests INDEXED BY ${d.index} WHERE ${d.equal} AND ${RANGE} ORDER BY created_at DESC, id DESC`

/** The page (scan → filter → join) and where a scan of SCAN_BUDGET entries ends, per driver. */
const STATEMENTS = Object.fromEntries(
  Object.entries(DRIVERS).map(([name, d]) => [
    name,
    {
      page: `SELECT ${COLUMNS} FROM (SELECT id, created_at ${scanOf(d)} LIMIT $budget) s
        JOIN requests r ON r.id = s.id LEFT JOIN accounts a ON a.id = r.account_id
        WHERE ${REST} ORDER BY s.created_at DESC, s.id DESC LIMIT $want`,
      tail: `SELECT created_at, id ${scanOf(d)} LIMIT 1 OFFSET $skip`,
    },
  ]),
) as Record<Driver, { page: string; tail: string }>

const BY_ID = `SELECT ${COLUMNS} FROM requests r LEFT JOIN accounts a ON a.id = r.account_id WHERE r.id = ?`

type Bind = Record<string, string | number | null>

const toRow = (r: Row): RequestLogRow => ({
  id: r.id,
  gatewayId: r.gateway_id,
  requestId: r.request_id,
  accountId: r.account_id,
  accountName: r.account_name,
  keyId: r.key_id,
  model: r.model,
  surface: r.surface,
  stream: r.stream === 1,
  createdAt: r.created_at,
  status: r.status,
  promptTokens: r.prompt_tokens,
  completionTokens: r.completion_tokens,
  latencyMs: r.latency_ms,
  ttftMs: r.ttft_ms,
  errorCode: r.error_code,
  costMicros: r.cost_micros,
  attempts: r.attempts,
  answeredBy: r.answered_by,
  estimated: r.estimated === 1,
})

/** The most selective index the filter allows. */
function driverOf(f: RequestLogFilter): Driver {
  if (f.keyId !== undefined) return 'key'
  if (f.accountId !== undefined) return 'account'
  if (f.model !== undefined) return 'model'
  if (f.status !== undefined) return 'status'
  return 'time'
}

export class RequestLogQueries {
  constructor(private readonly db: Database) {}

  page(f: RequestLogFilter): RequestLogPage {
    const st = STATEMENTS[driverOf(f)]
    const range = {
      from: f.from ?? -FAR,
      to: f.to ?? FAR,
      at: f.cursor?.at ?? FAR,
      id: f.cursor?.id ?? FAR,
    }
    const equal = {
      account: f.accountId ?? null,
      key: f.keyId ?? null,
      model: f.model ?? null,
      status: f.status ?? null,
    }
    const bind: Bind = {
      ...range,
      ...equal,
      surface: f.surface ?? null,
      smin: f.statusMin ?? null,
      smax: f.statusMax ?? f.statusMin ?? null,
      budget: SCAN_BUDGET,
      want: f.limit + 1,
    }
    const rows = this.db.query<Row, [Bind]>(st.page).all(bind)
    if (rows.length > f.limit) {
      const page = rows.slice(0, f.limit).map(toRow)
      const last = page[page.length - 1]!
      return { rows: page, next: { at: last.createdAt, id: last.id } }
    }
    // Fewer matches than asked: either the log ends inside the budget, or the budget ran out
    // and the next page continues after the last entry scanned.
    const tail = this.db
      .query<{ created_at: number; id: number }, [Bind]>(st.tail)
      .get({ ...range, ...equal, skip: SCAN_BUDGET - 1 })
    return { rows: rows.map(toRow), next: tail ? { at: tail.created_at, id: tail.id } : null }
  }

  byId(id: number): RequestLogRow | null {
    const r = this.db.query<Row, [number]>(BY_ID).get(id)
    return r ? toRow(r) : null
  }
}
