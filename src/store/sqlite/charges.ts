/**
 * @module
 * Tokens and money on SQLite: what each limit row has used, read without charging (`/v1/usage`,
 * headers). Off the hot path, so a window is summed from the charges its admissions hold
 * (migrations-v14.ts); admission itself keeps running sums (scopes.ts) instead. A key's requests
 * are counted where the key has rows of its own (only then are they charged). An account that
 * keeps no limit state (no row of its own ever charged it) has used no tokens on its rows: its
 * windows are not summed (a busy unmetered account's day is millions of admissions). Each token
 * and money row also says what of its use reservations in flight hold (`settled = 0`).
 */
import type { Database } from 'bun:sqlite'
import { type LimitRow, periodBounds, type RowState, rowState } from '../../limits/rows.ts'
import type { WindowSpans } from '../../limits/types.ts'
import { PERIOD_CODE } from '../periods.ts'
import { type Stored, spentOf } from './scope-state.ts'

interface Sum {
  n: number
  first: number | null
}

/** The money counters of a scope's state (and, for an account, whether it keeps one: `m_start`). */
type Counters = Pick<Stored, 'm_start' | 'pd_start' | 'pd' | 'pw_start' | 'pw' | 'pm_start' | 'pm'>

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
      // A key's admissions are known where it has rows of its own (its charges carry its id).
      keyWindow: db.query<Sum, [number, string, number]>(
        `SELECT COUNT(*) AS n, MIN(created_at) AS first FROM admissions
         WHERE account_id = ? AND key_id = ? AND created_at > ?`,
      ),
      accountTokens: db.query<Sum, [number, number]>(
        `SELECT COALESCE(SUM(tokens), 0) AS n, MIN(created_at) AS first FROM admissions
         WHERE account_id = ? AND created_at > ? AND tokens > 0`,
      ),
      keyTokens: db.query<Sum, [number, string, number]>(
        `SELECT COALESCE(SUM(tokens), 0) AS n, MIN(created_at) AS first FROM admissions
         WHERE account_id = ? AND key_id = ? AND created_at > ? AND tokens > 0`,
      ),
      // What reservations in flight hold (unsettled charges), from `from` on: every charge made
      // before the sweep's mark is settled (migrations-v13.ts), so `from` is never before it and
      // only the last sweep interval's charges are read, not a whole day's.
      mark: db.query<{ mark: number }, []>('SELECT mark FROM charge_sweep WHERE id = 1'),
      accountHeldTokens: db.query<{ n: number }, [number, number]>(
        `SELECT COALESCE(SUM(tokens), 0) AS n FROM admissions
         WHERE account_id = ? AND created_at >= ? AND settled = 0 AND tokens > 0`,
      ),
      keyHeldTokens: db.query<{ n: number }, [number, string, number]>(
        `SELECT COALESCE(SUM(tokens), 0) AS n FROM admissions
         WHERE account_id = ? AND key_id = ? AND created_at >= ? AND settled = 0 AND tokens > 0`,
      ),
      // A period's: the unsettled charges made in it to its counter.
      accountHeld: db.query<{ n: number }, [number, number, number]>(
        `SELECT COALESCE(SUM(charge_micros), 0) AS n FROM admissions
         WHERE account_id = ? AND created_at >= ? AND settled = 0 AND (budgets & 3) = ?`,
      ),
      keyHeld: db.query<{ n: number }, [number, string, number, number]>(
        `SELECT COALESCE(SUM(charge_micros), 0) AS n FROM admissions
         WHERE account_id = ? AND key_id = ? AND created_at >= ? AND settled = 0 AND ((budgets >> 2) & 3) = ?`,
      ),
      // A period kind's counter counts while it is the current period's (scopes.ts): an
      // account's in its newest admission, a key's in its `limit_scopes` row.
      accountState: db.query<Counters, [number]>(
        `SELECT m_start, pd_start, pd, pw_start, pw, pm_start, pm FROM admissions WHERE account_id = ?
         ORDER BY created_at DESC, seq DESC LIMIT 1`,
      ),
      keyState: db.query<Counters, [string]>(
        'SELECT m_start, pd_start, pd, pw_start, pw, pm_start, pm FROM limit_scopes WHERE scope = ?',
      ),
    }
  }

  rowStates(accountId: number, keyId: string | null, now: number, rows: LimitRow[]): RowState[] {
    let account: Counters | null | undefined
    const accountState = () => {
      if (account === undefined) account = this.q.accountState.get(accountId)
      return account
    }
    let mark: number | undefined
    // The first time an unsettled charge of these rows can have: `from`, or the sweep's mark.
    const heldFrom = (from: number) => {
      mark ??= this.q.mark.get()?.mark ?? 0
      return Math.max(from, mark)
    }
    return rows.map((row) => {
      if (row.window === 'period') {
        const period = row.period ?? 'month'
        const p = periodBounds(period, now)
        const c = row.scope === 'account' ? accountState() : this.q.keyState.get(`k:${keyId}`)
        const spent = c ? spentOf(c, period, p.start) : 0
        const held = !spent
          ? 0
          : row.scope === 'account'
            ? this.q.accountHeld.get(accountId, heldFrom(p.start), PERIOD_CODE[period])!.n
            : this.q.keyHeld.get(accountId, keyId ?? '', heldFrom(p.start), PERIOD_CODE[period])!.n
        return rowState(row, spent, null, p.resetsAt, held)
      }
      const span = row.window === 'minute' ? this.spans.minuteMs : this.spans.dayMs
      const since = now - span
      const tokens = row.resource !== 'requests'
      // An account that keeps no limit state has never been charged on rows of its own (its
      // newest admission would carry the state): nothing to sum, and its uncharged admissions —
      // millions a day on a busy account — are not read.
      if (row.scope === 'account' && tokens && (accountState()?.m_start ?? null) === null)
        return rowState(row, 0, null, span, 0)
      if (!tokens) {
        const s =
          row.scope === 'account'
            ? this.q.accountWindow.get(accountId, since)
            : this.q.keyWindow.get(accountId, keyId ?? '', since)
        return rowState(row, s?.n ?? 0, s?.first ?? null, span)
      }
      const s =
        row.scope === 'account'
          ? this.q.accountTokens.get(accountId, since)
          : this.q.keyTokens.get(accountId, keyId ?? '', since)
      if (!s?.n) return rowState(row, 0, null, span, 0)
      const held =
        row.scope === 'account'
          ? this.q.accountHeldTokens.get(accountId, heldFrom(since + 1))!.n
          : this.q.keyHeldTokens.get(accountId, keyId ?? '', heldFrom(since + 1))!.n
      return rowState(row, s.n, s.first, span, held)
    })
  }
}
