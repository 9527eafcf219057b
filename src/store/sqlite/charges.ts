/**
 * @module
 * Tokens and money on SQLite (migrations-v9.ts): what each limit row has used, read without
 * charging (`/v1/usage`, headers). Off the hot path, so a window is summed from the charges it
 * holds (migrations-v9.ts); admission itself keeps running sums (limit_scopes) instead. A key's
 * requests are counted where the key has rows of its own (only then are they charged).
 */
import type { Database } from 'bun:sqlite'
import { type LimitRow, periodBounds, type RowState, rowState } from '../../limits/rows.ts'
import type { WindowSpans } from '../../limits/types.ts'

interface Sum {
  n: number
  first: number | null
}

/** The scope's key in `limit_scopes`: `a:<account id>` or `k:<key id>`. */
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
      // The scope's counter for the period kind counts while it is the current period's (scopes.ts).
      spent: {
        day: db.query<{ micros: number | null }, [string, number]>(
          'SELECT pd AS micros FROM limit_scopes WHERE scope = ? AND pd_start = ?',
        ),
        week: db.query<{ micros: number | null }, [string, number]>(
          'SELECT pw AS micros FROM limit_scopes WHERE scope = ? AND pw_start = ?',
        ),
        month: db.query<{ micros: number | null }, [string, number]>(
          'SELECT pm AS micros FROM limit_scopes WHERE scope = ? AND pm_start = ?',
        ),
      },
    }
  }

  rowStates(accountId: number, keyId: string | null, now: number, rows: LimitRow[]): RowState[] {
    return rows.map((row) => {
      if (row.window === 'period') {
        const period = row.period ?? 'month'
        const p = periodBounds(period, now)
        const spent = this.q.spent[period].get(scopeKey(row, accountId, keyId), p.start)
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
