/**
 * @module
 * The request log, newest first, with a cursor on (created_at, id). One index drives each query
 * (key, account, model, exact status, or time alone), read backwards from the cursor; the other
 * filters are checked on at most `SCAN_BUDGET` entries of it per page. So every page costs a
 * bounded index range read whatever the log's size or the filters' rarity — a rare combination
 * gets a partial page whose cursor continues where the scan stopped.
 */
import type { Database } from 'bun:sqlite'
import type { RequestLogFilter, RequestLogPage, RequestLogRow } from '../types.ts'

/** Index entries one page may read when filters beyond the driving one apply. */
export const SCAN_BUDGET = 5000

interface Row {
  id: number
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
}

const COLUMNS = `r.id, r.request_id, r.account_id, a.name AS account_name, r.key_id, r.model, r.surface,
  r.stream, r.created_at, r.status, r.prompt_tokens, r.completion_tokens, r.latency_ms, r.ttft_ms, r.error_code`

type Param = string | number

const toRow = (r: Row): RequestLogRow => ({
  id: r.id,
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
})

/** The most selective index the filter allows, its equality condition, and what is left over. */
function plan(f: RequestLogFilter): {
  index: string
  drive: string
  driveParams: Param[]
  rest: string[]
  restParams: Param[]
} {
  const conds: Array<[string, string, Param]> = []
  if (f.keyId !== undefined) conds.push(['requests_key_time', 'key_id = ?', f.keyId])
  if (f.accountId !== undefined) conds.push(['requests_account_time', 'account_id = ?', f.accountId])
  if (f.model !== undefined) conds.push(['requests_model_time', 'model = ?', f.model])
  if (f.status !== undefined) conds.push(['requests_status_time', 'status = ?', f.status])
  if (f.surface !== undefined) conds.push(['', 'surface = ?', f.surface])
  const driver = conds[0]?.[0] ? conds.shift()! : null
  const rest = conds.map((c) => `r.${c[1]}`)
  const restParams = conds.map((c) => c[2])
  if (f.statusMin !== undefined) {
    rest.push('r.status BETWEEN ? AND ?')
    restParams.push(f.statusMin, f.statusMax ?? f.statusMin)
  }
  return driver
    ? { index: driver[0], drive: driver[1], driveParams: [driver[2]], rest, restParams }
    : { index: 'requests_time', drive: '1', driveParams: [], rest, restParams }
}

export class RequestLogQueries {
  constructor(private readonly db: Database) {}

  page(f: RequestLogFilter): RequestLogPage {
    const p = plan(f)
    const range: string[] = []
    const rangeParams: Param[] = []
    if (f.from !== undefined) {
      range.push('created_at >= ?')
      rangeParams.push(f.from)
    }
    if (f.to !== undefined) {
      range.push('created_at < ?')
      rangeParams.push(f.to)
    }
    if (f.cursor) {
      range.push('(created_at, id) < (?, ?)')
      rangeParams.push(f.cursor.at, f.cursor.id)
    }
    const where = [p.drive, ...range].join(' AND ')
    const scan = `SELECT id, created_at FROM requests INDEXED BY ${p.index} WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ?`
    const scanParams = [...p.driveParams, ...rangeParams]
    const want = f.limit + 1

    if (!p.rest.length) {
      const rows = this.db
        .query<Row, Param[]>(
          `SELECT ${COLUMNS} FROM (${scan}) s JOIN requests r ON r.id = s.id LEFT JOIN accounts a ON a.id = r.account_id
           ORDER BY s.created_at DESC, s.id DESC`,
        )
        .all(...scanParams, want)
      return finish(rows, f.limit, null)
    }
    const rows = this.db
      .query<Row, Param[]>(
        `SELECT ${COLUMNS} FROM (${scan}) s JOIN requests r ON r.id = s.id LEFT JOIN accounts a ON a.id = r.account_id
         WHERE ${p.rest.join(' AND ')} ORDER BY s.created_at DESC, s.id DESC LIMIT ?`,
      )
      .all(...scanParams, SCAN_BUDGET, ...p.restParams, want)
    if (rows.length >= want) return finish(rows, f.limit, null)
    // Fewer matches than asked: either the log ends inside the budget, or the budget ran out
    // and the next page continues after the last entry scanned.
    const last = this.db
      .query<{ created_at: number; id: number }, Param[]>(
        `SELECT created_at, id FROM requests INDEXED BY ${p.index} WHERE ${where}
         ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?`,
      )
      .get(...scanParams, SCAN_BUDGET - 1)
    return finish(rows, f.limit, last ? { at: last.created_at, id: last.id } : null)
  }

  byId(id: number): RequestLogRow | null {
    const r = this.db
      .query<Row, [number]>(
        `SELECT ${COLUMNS} FROM requests r LEFT JOIN accounts a ON a.id = r.account_id WHERE r.id = ?`,
      )
      .get(id)
    return r ? toRow(r) : null
  }
}

function finish(rows: Row[], limit: number, scannedTo: RequestLogPage['next']): RequestLogPage {
  if (rows.length > limit) {
    const page = rows.slice(0, limit).map(toRow)
    const last = page[page.length - 1]!
    return { rows: page, next: { at: last.createdAt, id: last.id } }
  }
  return { rows: rows.map(toRow), next: scannedTo }
}
