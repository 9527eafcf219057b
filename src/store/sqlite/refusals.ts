/**
 * @module
 * Refusals before admission, per key, code and UTC hour: one row per (key, hour, code), so a
 * flood of refusals adds to a count instead of rows. Read for the console's per-key refusals and
 * `GET /admin/v1/refusals`; pruned with the hourly rollups (`usage.hourly_retention_days`).
 */
import type { Database } from 'bun:sqlite'
import type { RefusalCount, RefusalEvent, RefusalQuery } from '../types.ts'

const HOUR = 3_600_000
const COLUMNS = 't, account_id AS accountId, key_id AS keyId, code, status, count'

export class RefusalQueries {
  private readonly q

  constructor(db: Database) {
    this.q = {
      upsert: db.query<null, [string, number, string, number, number, number]>(
        `INSERT INTO refusals_hourly (key_id, t, code, account_id, status, count) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (key_id, t, code) DO UPDATE SET count = count + excluded.count`,
      ),
      byKey: db.query<RefusalCount, [string, number, number]>(
        `SELECT ${COLUMNS} FROM refusals_hourly WHERE key_id = ? AND t >= ? AND t < ? ORDER BY t, code`,
      ),
      byAccount: db.query<RefusalCount, [number, number, number]>(
        `SELECT ${COLUMNS} FROM refusals_hourly WHERE account_id = ? AND t >= ? AND t < ? ORDER BY t, key_id, code`,
      ),
      all: db.query<RefusalCount, [number, number]>(
        `SELECT ${COLUMNS} FROM refusals_hourly WHERE t >= ? AND t < ? ORDER BY t, key_id, code`,
      ),
      prune: db.query<null, [number, number]>(
        `DELETE FROM refusals_hourly WHERE (key_id, t, code) IN
           (SELECT key_id, t, code FROM refusals_hourly WHERE t < ? LIMIT ?)`,
      ),
    }
  }

  /** Call inside the caller's write transaction. */
  add(e: RefusalEvent): void {
    this.q.upsert.run(e.keyId, e.at - (e.at % HOUR), e.code, e.accountId, e.status, e.count)
  }

  list(q: RefusalQuery): RefusalCount[] {
    const from = q.from - (q.from % HOUR)
    if (q.keyId !== undefined) return this.q.byKey.all(q.keyId, from, q.to)
    if (q.accountId !== undefined) return this.q.byAccount.all(q.accountId, from, q.to)
    return this.q.all.all(from, q.to)
  }

  prune(before: number, chunk: number): number {
    return this.q.prune.run(before, chunk).changes
  }
}
