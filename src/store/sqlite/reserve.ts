/**
 * @module
 * Reserve and settle on SQLite (DESIGN §11), inside the limiter's `BEGIN IMMEDIATE` transaction:
 * the charge rows (tokens, money, a key's own rows) are checked and charged in the same atomic
 * step as the request windows, and settled once inside the usage flush's transaction.
 *
 * A sliding window's use is a running sum (`limit_sums`: the charges after `start`): admission
 * moves `start` to the window's edge, subtracting the charges that left — each charge leaves
 * once, so a window is never summed on the hot path. Settlement adds the difference to every sum
 * whose window still holds the charge. Money is a counter per scope and calendar period (`spend`).
 *
 * Reservations never settled (a process killed mid-request) are settled to nothing by `sweep`
 * once older than the longest a request can run (see `settleBoundMs`).
 */
import type { Database } from 'bun:sqlite'
import { outputAllowance } from '../../limits/allowance.ts'
import type { PricingUnits } from '../../limits/pricing.ts'
import {
  type CalendarPeriod,
  type LimitRow,
  periodBounds,
  type RowState,
  rowState,
} from '../../limits/rows.ts'
import type { AdmitInput, ChargeRefusal, Reservation, Settlement, WindowSpans } from '../../limits/types.ts'

const PERIOD_CODE: Record<CalendarPeriod, number> = { day: 1, week: 2, month: 3 }
const PERIODS: (CalendarPeriod | null)[] = [null, 'day', 'week', 'month']

interface ChargeRow {
  key_id: string
  tokens: number
  charge_micros: number
  budgets: number
  settled: number
}

const BETWEEN = 'FROM charges WHERE account_id = ? AND created_at > ? AND created_at <= ?'
const OF_KEY = 'AND key_id = ?'
const OLDEST = 'SELECT MIN(created_at) AS at FROM charges WHERE account_id = ? AND created_at > ?'
const OLDEST_OF_KEY = `${OLDEST} ${OF_KEY}`

const scopeOf = (row: LimitRow, accountId: number, keyId: string) =>
  row.scope === 'account' ? `a:${accountId}` : `k:${keyId}`
const winOf = (row: LimitRow) => `${row.resource}:${row.window}`

export class ReserveQueries {
  private readonly q

  constructor(
    db: Database,
    private readonly spans: WindowSpans,
  ) {
    type Between = [number, number, number, ...string[]]
    const oldest = (key: boolean) =>
      db.query<{ at: number | null }, [number, number, ...string[]]>(key ? OLDEST_OF_KEY : OLDEST)
    this.q = {
      sums: db.query<{ start: number; used: number }, [string, string]>(
        'SELECT start, used FROM limit_sums WHERE scope = ? AND win = ?',
      ),
      putSum: db.query<null, [string, string, number, number]>(
        `INSERT INTO limit_sums (scope, win, start, used) VALUES (?, ?, ?, ?)
         ON CONFLICT (scope, win) DO UPDATE SET start = excluded.start, used = excluded.used`,
      ),
      between: {
        'tokens:account': db.query<{ n: number }, Between>(`SELECT COALESCE(SUM(tokens), 0) AS n ${BETWEEN}`),
        'tokens:key': db.query<{ n: number }, Between>(
          `SELECT COALESCE(SUM(tokens), 0) AS n ${BETWEEN} ${OF_KEY}`,
        ),
        'requests:account': db.query<{ n: number }, Between>(`SELECT COUNT(*) AS n ${BETWEEN}`),
        'requests:key': db.query<{ n: number }, Between>(`SELECT COUNT(*) AS n ${BETWEEN} ${OF_KEY}`),
      },
      oldest: { account: oldest(false), key: oldest(true) },
      /** The window's charges oldest first: when enough have left for `needs` (refusals only). */
      inWindow: db.query<{ created_at: number; tokens: number; key_id: string }, [number, number]>(
        'SELECT created_at, tokens, key_id FROM charges WHERE account_id = ? AND created_at > ? ORDER BY created_at, seq',
      ),
      spent: db.query<{ micros: number }, [string, string, number]>(
        'SELECT micros FROM spend WHERE scope = ? AND period = ? AND start = ?',
      ),
      spend: db.query<null, [string, string, number, number]>(
        `INSERT INTO spend (scope, period, start, micros) VALUES (?, ?, ?, ?)
         ON CONFLICT (scope, period, start) DO UPDATE SET micros = micros + excluded.micros`,
      ),
      insert: db.query<null, [number, number, number, string, number, number, number, number]>(
        `INSERT INTO charges (account_id, created_at, seq, key_id, tokens, charge_micros, budgets, settled)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      charge: db.query<ChargeRow, [number, number, number]>(
        'SELECT key_id, tokens, charge_micros, budgets, settled FROM charges WHERE account_id = ? AND created_at = ? AND seq = ?',
      ),
      settle: db.query<null, [number, number, number, number, number]>(
        'UPDATE charges SET tokens = ?, charge_micros = ?, settled = 1 WHERE account_id = ? AND created_at = ? AND seq = ?',
      ),
      adjust: db.query<null, [number, string, string, number]>(
        `UPDATE limit_sums SET used = used + ? WHERE scope IN (?, ?) AND win IN ('tokens:minute', 'tokens:day') AND start < ?`,
      ),
      adjustSpend: db.query<null, [number, string, string, number]>(
        'UPDATE spend SET micros = micros + ? WHERE scope = ? AND period = ? AND start = ?',
      ),
      stale: db.query<{ account_id: number; created_at: number; seq: number }, [number, number]>(
        'SELECT account_id, created_at, seq FROM charges WHERE settled = 0 AND created_at < ? ORDER BY created_at LIMIT ?',
      ),
      prune: db.query<null, [number, number]>(
        `DELETE FROM charges WHERE (account_id, created_at, seq) IN
           (SELECT account_id, created_at, seq FROM charges WHERE created_at < ? AND settled = 1 LIMIT ?)`,
      ),
    }
  }

  /** Each row's state at `at`, its running sum moved to the window's edge (inside the write lock; written by the charge). */
  private states(input: AdmitInput, at: number, rows: LimitRow[]): RowState[] {
    return rows.map((row) => {
      const scope = scopeOf(row, input.accountId, input.keyId)
      if (row.window === 'period') {
        const p = periodBounds(row.period!, at)
        return rowState(row, this.q.spent.get(scope, row.period!, p.start)?.micros ?? 0, null, p.resetsAt)
      }
      const span = this.span(row)
      const edge = at - span
      const win = winOf(row)
      const keyed = row.scope === 'key' ? [input.keyId] : []
      const between = this.q.between[`${row.resource as 'tokens' | 'requests'}:${row.scope}`]
      const s = this.q.sums.get(scope, win)
      let used: number
      if (s && edge <= s.start) used = s.used
      else {
        // The charges that left since the sum was last moved; a window not moved for a whole span
        // (its old charges may be pruned: prune keeps two day windows) is summed afresh instead.
        used =
          s && s.start + span > edge
            ? s.used - between.get(input.accountId, s.start, edge, ...keyed)!.n
            : between.get(input.accountId, edge, Number.MAX_SAFE_INTEGER, ...keyed)!.n
        // Written with the charge (one write per row); a refusal leaves the sum where it was.
      }
      const first = used > 0 ? this.q.oldest[row.scope].get(input.accountId, edge, ...keyed)!.at : null
      return rowState(row, used, first, span)
    })
  }

  private span(row: LimitRow): number {
    return row.window === 'minute' ? this.spans.minuteMs : this.spans.dayMs
  }

  /** Check the charge rows and, if they leave room, charge them; call before the admission is written. */
  reserve(
    input: AdmitInput,
    at: number,
    seq: number,
  ): { reservation: Reservation } | { refusal: ChargeRefusal } {
    const c = input.charge!
    const states = this.states(input, at, c.rows)
    for (const s of states) {
      if (s.row.resource === 'requests' && s.remaining < 1)
        return { refusal: { state: s, needs: 1, retryAt: this.retryAt(input, s, 1, at) } }
    }
    const a = outputAllowance({
      requested: c.wantOutput,
      modelMax: c.wantOutput,
      inputBound: c.inputTokens,
      states,
      units: unitsOf(c.price),
    })
    if (!a.ok) {
      const retryAt =
        a.state.row.window === 'period' ? a.state.resetAt : this.retryAt(input, a.state, a.needs, at)
      return { refusal: { state: a.state, needs: a.needs, retryAt } }
    }
    const tokens = c.inputTokens + a.tokens
    let budgets = 0
    const after = states.map((s) => {
      const scope = scopeOf(s.row, input.accountId, input.keyId)
      const amount = s.row.resource === 'requests' ? 1 : s.row.resource === 'tokens' ? tokens : a.highestCost
      let resetAt = s.resetAt
      if (s.row.window === 'period') {
        this.q.spend.run(scope, s.row.period!, periodBounds(s.row.period!, at).start, amount)
        budgets |= PERIOD_CODE[s.row.period!] << (s.row.scope === 'account' ? 0 : 2)
      } else {
        this.q.putSum.run(scope, winOf(s.row), at - this.span(s.row), s.used + amount)
        resetAt ??= at + this.span(s.row)
      }
      return { ...s, used: s.used + amount, remaining: Math.max(0, s.remaining - amount), resetAt }
    })
    const settles = c.rows.some((r) => r.resource !== 'requests')
    this.q.insert.run(input.accountId, at, seq, input.keyId, tokens, a.highestCost, budgets, settles ? 0 : 1)
    return {
      reservation: {
        tokens,
        micros: a.highestCost,
        outputTokens: a.tokens,
        clampedBy: a.clampedBy,
        states: after,
        handle: `${input.accountId}:${at}:${seq}`,
      },
    }
  }

  /** When enough of the window's charges have left for `needs` more (null: never). */
  private retryAt(input: AdmitInput, s: RowState, needs: number, at: number): number | null {
    if (needs > s.row.capacity) return null
    const span = this.span(s.row)
    let free = s.row.capacity - s.used
    for (const r of this.q.inWindow.all(input.accountId, at - span)) {
      if (s.row.scope === 'key' && r.key_id !== input.keyId) continue
      free += s.row.resource === 'requests' ? 1 : r.tokens
      if (free >= needs) return r.created_at + span
    }
    return at + span
  }

  /** Settles once (a second settlement of the same charge changes nothing); inside the flush's transaction. */
  settle(s: Settlement): void {
    const [account, at, seq] = s.handle.split(':').map(Number) as [number, number, number]
    const c = this.q.charge.get(account, at, seq)
    if (!c || c.settled) return
    this.apply(account, at, seq, c, s.tokens, s.micros)
  }

  private apply(
    account: number,
    at: number,
    seq: number,
    c: ChargeRow,
    tokens: number,
    micros: number,
  ): void {
    const dt = tokens - c.tokens
    if (dt !== 0) this.q.adjust.run(dt, `a:${account}`, `k:${c.key_id}`, at)
    const dm = micros - c.charge_micros
    if (dm !== 0) {
      for (const [shift, scope] of [
        [0, `a:${account}`],
        [2, `k:${c.key_id}`],
      ] as const) {
        const period = PERIODS[(c.budgets >> shift) & 3]
        if (period) this.q.adjustSpend.run(dm, scope, period, periodBounds(period, at).start)
      }
    }
    this.q.settle.run(tokens, micros, account, at, seq)
  }

  /** Settles to nothing up to `limit` reservations made before `before` and never settled; returns how many. */
  sweep(before: number, limit: number): number {
    const rows = this.q.stale.all(before, limit)
    for (const r of rows) {
      const c = this.q.charge.get(r.account_id, r.created_at, r.seq)!
      this.apply(r.account_id, r.created_at, r.seq, c, 0, 0)
    }
    return rows.length
  }

  /**
   * Deletes up to `chunk` settled charges made a day window before `before` (the day window's
   * start): a running sum moved within a span reads back at most that far. Returns how many.
   */
  prune(before: number, chunk: number): number {
    return this.q.prune.run(before - this.spans.dayMs, chunk).changes
  }
}

/** The admission's prices as allowance.ts takes them (the dearer input and output prices). */
function unitsOf(p: { input: number; output: number } | null): PricingUnits | null {
  if (!p) return null
  const input = BigInt(p.input)
  const output = BigInt(p.output)
  return { input, output, cachedInput: input, cacheWrite: input, reasoning: output }
}
