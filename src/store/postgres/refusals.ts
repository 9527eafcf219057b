/**
 * @module
 * Refusals before admission on PostgreSQL, per key, code and UTC hour — the same contract as
 * `sqlite/refusals.ts`. Values are bound (a JSON recordset, as `recordRateLimited` does).
 */
import type { SQL } from 'bun'
import { num } from '../account-rows.ts'
import type { RefusalCount, RefusalEvent, RefusalQuery } from '../types.ts'

const HOUR = 3_600_000

export async function recordRefusals(sql: SQL, batch: RefusalEvent[]): Promise<void> {
  if (!batch.length) return
  const rows = batch.map((e) => ({
    key_id: e.keyId,
    t: e.at - (e.at % HOUR),
    code: e.code,
    account_id: e.accountId,
    status: e.status,
    count: e.count,
  }))
  await sql`
    INSERT INTO refusals_hourly (key_id, t, code, account_id, status, count)
    SELECT key_id, t, code, MIN(account_id), MIN(status), SUM(count)
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
      AS v(key_id TEXT, t BIGINT, code TEXT, account_id BIGINT, status INTEGER, count BIGINT)
    GROUP BY key_id, t, code
    ON CONFLICT (key_id, t, code) DO UPDATE SET count = refusals_hourly.count + excluded.count`
}

export async function listRefusals(sql: SQL, q: RefusalQuery): Promise<RefusalCount[]> {
  const from = q.from - (q.from % HOUR)
  const where =
    q.keyId !== undefined
      ? sql`key_id = ${q.keyId}`
      : q.accountId !== undefined
        ? sql`account_id = ${q.accountId}`
        : sql`TRUE`
  const rows = await sql`
    SELECT t, account_id, key_id, code, status, count FROM refusals_hourly
    WHERE ${where} AND t >= ${from} AND t < ${q.to} ORDER BY t, key_id, code`
  return rows.map((r: Record<string, unknown>) => ({
    t: num(r.t),
    accountId: num(r.account_id),
    keyId: String(r.key_id),
    code: String(r.code),
    status: num(r.status),
    count: num(r.count),
  }))
}

export async function pruneRefusals(sql: SQL, before: number, chunk: number): Promise<number> {
  const r = await sql`
    DELETE FROM refusals_hourly WHERE ctid IN (SELECT ctid FROM refusals_hourly WHERE t < ${before} LIMIT ${chunk})`
  return r.count
}
