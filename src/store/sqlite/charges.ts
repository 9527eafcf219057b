/**
 * @module
 * Tokens and money on SQLite (migrations-v9.ts): what each limit row has used, read without
 * charging (`/v1/usage`, headers). Off the hot path, so a window is summed from the charges it
 * holds (migrations-v9.ts); admission itself keeps running sums (limit_sums) instead. A key's
 * requests are counted where the key has rows of its own (only then are they charged).
 */
import type { Database } from 'bun:sqlite'
import { type LimitRow, periodBounds, type RowState, rowState } from '../../limits/rows.ts'
import type { WindowSpans } from '../../limits/types.ts'

interface Sum {
  n: number
  first: number | null
}

/** The scope's key in `limit_sums` and `spend`: `a:<account id>` or `k:<key id>`. */
export const scopeKey = (row: LimitRow, accountId: number, keyId: string | null): string =>
  row.scope === 'account' ? `a:${accountId}` : `k:${keyId}`

export class ChargeQueries {
  private readonly q

  constructor(
    db: Database,
    private readonly spans: WindowSpans,
  ) {
    this.q = {
      accountWindow: db.query<Sum, [number, number]>(
        `SELECT COUNT(*) AS n, MIN(created_at) AS first FROM admissions WHERE account_id = ? AND created_at > ?`,
      ),
      // A key's admissions are known where it has rows of its own (charges.ts keeps them).
      keyWindow: db.query<Sum, [number, string, number]>(
        `SELECT COUNT(*) AS n, MIN(created_at) AS first FROM charges
         WHERE account_id = ? AND key_id = ? AND created_at > ?`,
      ),
      accountTokens: db.query<Sum, [number, number]>(
        `SELECT COALESCE(SUM(tokens), 0) AS n, MIN(created_at) AS first FROM charges
         WHERE account_id = ? AND created_at > ? AND tokens > 0`,
      ),
      keyTokens: db.query<Sum, [number, string, number]>(
        `SELECT COALESCE(SUM(tokens), 0) AS n, MIN(created_at) AS first FROM charges
         WHERE account_id = ? AND key_id = ? AND created_at > ? AND tokens > 0`,
      ),
      spent: db.query<{ micros: number }, [string, string, number]>(
        'SELECT micros FROM spend WHERE scope = ? AND period = ? AND start = ?',
      ),
    }
  }

  rowStates(accountId: number, keyId: string | null, now: number, rows: LimitRow[]): RowState[] {
    return rows.map((row) => {
      if (row.window === 'period') {
        const p = periodBounds(row.period ?? 'month', now)
        const spent = this.q.spent.get(scopeKey(row, accountId, keyId), row.period ?? 'month', p.start)
        return rowState(row, spent?.micros ?? 0, null, p.resetsAt)
      }
      const span = row.window === 'minute' ? this.spans.minuteMs : this.spans.dayMs
      const since = now - span
      const tokens = row.resource !== 'requests'
      const s =
        row.scope === 'account'
          ? (tokens ? this.q.accountTokens : this.q.accountWindow).get(accountId, since)
          : (tokens ? this.q.keyTokens : this.q.keyWindow).get(accountId, keyId ?? '', since)
      return rowState(row, s?.n ?? 0, s?.first ?? null, span)
    })
  }
}
