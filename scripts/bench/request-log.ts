/**
 * @module
 * The request log at 1,000,000 rows: every filter's first page and the pages that follow it
 * (cursor pagination), timed against the store directly. Target: every page under 50 ms.
 */
import { join } from 'node:path'
import { openSqliteStore, type RequestLogFilter } from '../../src/store/index.ts'
import { fmt, type Row, row, series } from './report.ts'
import { SEED_MODELS, seedRequestLog } from './request-log-seed.ts'

const TARGET = { op: '<=', value: 50, text: '≤ 50 ms' } as const
const DAY = 86_400_000

export async function requestLogRows(dir: string, rows: number, log: (s: string) => void): Promise<Row[]> {
  const end = Date.now()
  const span = 30 * DAY
  const store = openSqliteStore({ path: join(dir, 'request-log.db'), now: end })
  try {
    const seeded = performance.now()
    seedRequestLog(store.db, rows, end, span, 200)
    store.db.run('ANALYZE')
    log(`request log: ${fmt(rows)} rows seeded in ${fmt((performance.now() - seeded) / 1000, 1)} s`)
    const byTraffic = store.db
      .query<{ account_id: number; n: number }, []>(
        'SELECT account_id, COUNT(*) AS n FROM requests GROUP BY account_id ORDER BY n DESC',
      )
      .all()
    const busiest = byTraffic[0]!.account_id
    const quiet = byTraffic[byTraffic.length - 1]!.account_id
    log(
      `request log: busiest account ${fmt(byTraffic[0]!.n)} rows, quietest ${fmt(byTraffic[byTraffic.length - 1]!.n)}`,
    )
    const rare = SEED_MODELS[SEED_MODELS.length - 1]!
    const filters: Array<[string, Omit<RequestLogFilter, 'limit' | 'cursor'>]> = [
      ['none', {}],
      ['busiest account', { accountId: busiest }],
      ['quietest account', { accountId: quiet }],
      ['key', { keyId: `key_${busiest}_2` }],
      ['rarest model', { model: rare }],
      ['surface', { surface: 'messages' }],
      ['status 502', { status: 502 }],
      ['status 5xx', { statusMin: 500, statusMax: 599 }],
      ['last hour', { from: end - 3_600_000 }],
      ['a day a week ago', { from: end - 8 * DAY, to: end - 7 * DAY }],
      ['account + model + 5xx', { accountId: busiest, model: rare, statusMin: 500, statusMax: 599 }],
      ['quiet account + status 504 + surface', { accountId: quiet, status: 504, surface: 'responses' }],
    ]
    const out: Row[] = []
    let worst = 0
    for (const [name, f] of filters) {
      const first: number[] = []
      const next: number[] = []
      for (let rep = 0; rep < 5; rep++) {
        let cursor: RequestLogFilter['cursor']
        for (let page = 0; page < 10; page++) {
          const t = performance.now()
          const res = await store.requestLog({ ...f, limit: 100, cursor })
          ;(page === 0 ? first : next).push(performance.now() - t)
          if (!res.next) break
          cursor = res.next
        }
      }
      const max = Math.max(...first, ...next)
      worst = Math.max(worst, max)
      const f1 = series(first)
      const fn = series(next)
      out.push(
        row(
          `request log ${fmt(rows)} rows, filter: ${name} — first page / next pages, median (max)`,
          `${fmt(f1.median, 2)} (${fmt(f1.max, 2)}) / ${next.length ? `${fmt(fn.median, 2)} (${fmt(fn.max, 2)})` : 'one page'} ms`,
          max,
          TARGET,
        ),
      )
    }
    log(`request log: slowest page ${fmt(worst, 2)} ms`)
    return out
  } finally {
    store.close()
  }
}

if (import.meta.main) {
  const { mkdtempSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { renderTable } = await import('./report.ts')
  const dir = mkdtempSync(join(tmpdir(), 'sy-log-'))
  try {
    console.log(renderTable(await requestLogRows(dir, Number(process.argv[2] ?? 1_000_000), console.error)))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
