/**
 * @module
 * Tokens and money on PostgreSQL (migrations-v10.ts): what each limit row has used, read without
 * charging (`/v1/usage`, headers). Off the hot path: a window is summed from the admission log
 * (the `requests` rows admission wrote); admission keeps running sums (limit_sums) instead. Each
 * token and money row also says what of its use reservations in flight hold (`NOT settled`).
 */
import type { SQL } from 'bun'
import { type LimitRow, periodBounds, type RowState, rowState } from '../../limits/rows.ts'
import type { WindowSpans } from '../../limits/types.ts'
import { num, numOrNull } from '../account-rows.ts'
import { PERIOD_CODE } from '../periods.ts'

/** The scope's key in `limit_sums` and `spend`: `a:<account id>` or `k:<key id>` (as on SQLite). */
const scopeKey = (row: LimitRow, accountId: number, keyId: string | null): string =>
  row.scope === 'account' ? `a:${accountId}` : `k:${keyId}`

export class PgCharges {
  constructor(private readonly spans: WindowSpans) {}

  /** `sql`: the caller's connection (one bounded call, bounded.ts). */
  async rowStates(
    sql: SQL,
    accountId: number,
    keyId: string | null,
    now: number,
    rows: LimitRow[],
  ): Promise<RowState[]> {
    return Promise.all(rows.map((row) => this.rowState(sql, accountId, keyId, now, row)))
  }

  private async rowState(
    sql: SQL,
    accountId: number,
    keyId: string | null,
    now: number,
    row: LimitRow,
  ): Promise<RowState> {
    if (row.window === 'period') {
      const period = row.period ?? 'month'
      const p = periodBounds(period, now)
      // The money counter's code in `budgets` (migrations-v12.ts): the account's in bits 0–1, a key's in 2–3.
      const shift = row.scope === 'account' ? 0 : 2
      const code = PERIOD_CODE[period]
      const key = row.scope === 'key' ? keyId : null
      // One statement, one snapshot: read apart, a settlement landing between the two reads showed
      // the hold both in the spend (charged at admission) and as gone (spent = the whole hold).
      const [r] = await sql`
        SELECT
          (SELECT micros FROM spend
           WHERE scope = ${scopeKey(row, accountId, keyId)} AND period = ${period} AND start = ${p.start}) AS micros,
          -- The period's reservations in flight (requests_unsettled, migrations-v10.ts).
          (SELECT COALESCE(SUM(charge_micros), 0) FROM requests
           WHERE NOT settled AND created_at >= ${p.start} AND account_id = ${accountId}
             AND ((budgets >> ${shift}) & 3) = ${code} AND (${key}::TEXT IS NULL OR key_id = ${key})) AS n`
      return rowState(row, r?.micros != null ? num(r.micros) : 0, null, p.resetsAt, r ? num(r.n) : 0)
    }
    const span = row.window === 'minute' ? this.spans.minuteMs : this.spans.dayMs
    const key = row.scope === 'key' ? keyId : null
    if (row.resource === 'requests') {
      const [r] = await sql`
        SELECT COUNT(*) AS n, MIN(created_at) AS first FROM requests
        WHERE account_id = ${accountId} AND created_at > ${now - span}
          AND (${key}::TEXT IS NULL OR key_id = ${key})`
      return rowState(row, r ? num(r.n) : 0, r ? numOrNull(r.first) : null, span)
    }
    // The window's tokens and what reservations in flight hold of them, in one statement (one
    // snapshot): read apart, a settlement landing between the two reads showed the whole hold as
    // used and nothing held.
    const [r] = await sql`
      SELECT COALESCE(SUM(tokens), 0) AS n, MIN(created_at) AS first,
        COALESCE(SUM(tokens) FILTER (WHERE NOT settled), 0) AS held
      FROM requests
      WHERE account_id = ${accountId} AND created_at > ${now - span} AND tokens > 0
        AND (${key}::TEXT IS NULL OR key_id = ${key})`
    const used = r ? num(r.n) : 0
    if (used === 0) return rowState(row, 0, r ? numOrNull(r.first) : null, span)
    return rowState(row, used, r ? numOrNull(r.first) : null, span, num(r!.held))
  }
}

/** The tokens an account (or one key: `keyId`) was charged since `since`, and its oldest charge. */
export function tokensQuery(sql: SQL, accountId: number, keyId: string | null, since: number) {
  return sql`
    SELECT COALESCE(SUM(tokens), 0) AS n, MIN(created_at) AS first FROM requests
    WHERE account_id = ${accountId} AND created_at > ${since} AND tokens > 0
      AND (${keyId}::TEXT IS NULL OR key_id = ${keyId})`
}
