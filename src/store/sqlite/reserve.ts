/**
 * @module
 * Reserve and settle on SQLite (DESIGN §11), inside the limiter's `BEGIN IMMEDIATE` transaction:
 * the charge rows (tokens, money, a key's own rows) are checked and charged in the same atomic
 * step as the request windows, and settled inside the usage flush's transaction.
 *
 * A scope's sliding windows are running sums beside its money counters (scopes.ts): admission
 * moves each scope's sums to the windows' edges and checks the rows against them. The charge goes
 * into the admission's own row, and the account's new state with it when the admission is the
 * account's last in its transaction (the limiter writes it, migrations-v14.ts); a key with rows of
 * its own writes its `limit_scopes` row. A flush settles its batch: one statement a charge, then
 * one per scope the batch touched.
 *
 * Reservations never settled (a process killed mid-request) are settled to themselves — the most
 * they could have cost — by `sweep` once older than `limits.reservation_ttl_s` (app/serve.ts runs
 * it every tenth of that).
 */
import type { Database } from 'bun:sqlite'
import { outputAllowance } from '../../limits/allowance.ts'
import { type LimitRow, type RowState, rowState } from '../../limits/rows.ts'
import type {
  AdmitInput,
  ChargeRefusal,
  Extended,
  Extension,
  Reservation,
  Settlement,
  WindowSpans,
} from '../../limits/types.ts'
import { PERIOD_CODE, Periods } from '../periods.ts'
import {
  Changes,
  counterStart,
  EMPTY_STATE,
  type State,
  type Stored,
  setSpent,
  spentOf,
} from './scope-state.ts'
import { KEEPS_STATE, ScopeQueries } from './scopes.ts'

/**
 * The reservation's handle (`Reservation.handle`): its charge row's key and what the row holds
 * until settled, so settling needs no read of it. It stays in this process's memory.
 */
interface Handle {
  account: number
  at: number
  seq: number
  keyId: string
  /** The money counters it charged (the row's `budgets`). */
  budgets: number
  reservedTokens: number
  reservedMicros: number
  /** The key has rows of its own (a `limit_scopes` row to settle). */
  keyRows: boolean
}

interface Stale {
  account_id: number
  created_at: number
  seq: number
  tokens: number
  charge_micros: number
}

/** The charge's columns of its admission row: key, tokens, micro-dollars, money counters, settled. */
export type ChargeValues = [string, number, number, number, 0 | 1]

/** What a reservation writes with its admission: the charge, and the account's new state (null: carried over). */
export interface Reserved {
  reservation: Reservation
  charge: ChargeValues
  state: Stored | null
}

export class ReserveQueries {
  private readonly q
  private readonly scopes: ScopeQueries
  /** The calendar periods' bounds, kept while they hold the time asked (a Date apiece to work out). */
  private readonly periods = new Periods(0)

  constructor(
    db: Database,
    private readonly spans: WindowSpans,
  ) {
    this.scopes = new ScopeQueries(db, spans)
    this.q = {
      /** The window's charges oldest first: when enough have left for `needs` (refusals only). */
      inWindow: db.query<{ created_at: number; tokens: number; key_id: string }, [number, number]>(
        `SELECT created_at, tokens, key_id FROM admissions
         WHERE account_id = ? AND created_at > ? AND tokens IS NOT NULL ORDER BY created_at, seq`,
      ),
      // One statement a charge: cheaper than one for the batch through json_each (1.2 vs 2.9 µs a
      // charge in batches of 500, measured). A charge already settled (or swept) is left alone.
      settle: db.query<null, [number, number, number, number, number]>(
        `UPDATE admissions SET tokens = ?4, charge_micros = ?5, settled = 1
         WHERE account_id = ?1 AND created_at = ?2 AND seq = ?3 AND settled = 0`,
      ),
      // A live charge grown (`extend`); a settled one is left alone.
      grow: db.query<null, [number, number, number, number, number]>(
        `UPDATE admissions SET tokens = tokens + ?4, charge_micros = charge_micros + ?5
         WHERE account_id = ?1 AND created_at = ?2 AND seq = ?3 AND settled = 0`,
      ),
      /** Every charge made before it is settled (migrations-v13.ts). */
      mark: db.query<{ mark: number }, []>('SELECT mark FROM charge_sweep WHERE id = 1'),
      setMark: db.query<null, [number]>('UPDATE charge_sweep SET mark = MAX(mark, ?) WHERE id = 1'),
      accounts: db.query<{ account_id: number }, [number]>(
        'SELECT account_id FROM admissions WHERE account_id > ? ORDER BY account_id LIMIT 1',
      ),
      stale: db.query<Stale, [number, number, number, number]>(
        `SELECT account_id, created_at, seq, tokens, charge_micros FROM admissions
         WHERE account_id = ? AND created_at >= ? AND created_at < ? AND settled = 0
         ORDER BY created_at, seq LIMIT ?`,
      ),
      // Settled charges; an account's newest admission is kept when it holds the account's state.
      prune: db.query<null, [number, number, number]>(
        `DELETE FROM admissions WHERE (account_id, created_at, seq) IN
           (SELECT account_id, created_at, seq FROM admissions
            WHERE account_id = ?1 AND created_at < ?2 AND settled = 1
              AND ${KEEPS_STATE}
            ORDER BY created_at, seq LIMIT ?3)`,
      ),
    }
  }

  /** Each scope's state at `at`, once per scope the rows name (null: they name none of it). */
  private load(
    accountId: number,
    keyId: string,
    rows: LimitRow[],
    stored: Stored | null,
    at: number,
    keep: boolean,
  ) {
    const scoped = byScope(rows)
    const account = scoped.account.length
      ? this.scopes.loadAccount(accountId, stored ?? EMPTY_STATE, scoped.account, at, keep)
      : null
    const key = scoped.key.length ? this.scopes.loadKey(`k:${keyId}`, accountId, keyId, scoped.key, at) : null
    return { scoped, account, key }
  }

  private span(row: LimitRow): number {
    return row.window === 'minute' ? this.spans.minuteMs : this.spans.dayMs
  }

  /**
   * Check the charge rows and, if they leave room, charge them: a key's own state is written
   * here; the charge and the account's new state come back for the admission's row. `stored`:
   * the account's state as its newest admission holds it.
   */
  reserve(
    input: AdmitInput,
    at: number,
    seq: number,
    stored: Stored | null,
    /** No admission of the account has been written in this transaction yet (scopes.ts: `loadAccount`). */
    keep: boolean,
  ): Reserved | { refusal: ChargeRefusal } {
    const c = input.charge!
    const { scoped, account, key } = this.load(input.accountId, input.keyId, c.rows, stored, at, keep)
    const periods = this.periods.at(at)
    const states = this.statesOf(c.rows, account, key)
    // A key's own request rows: with several full, the one that admits last (DESIGN §5).
    let full: ChargeRefusal | null = null
    for (const s of states) {
      if (s.row.resource !== 'requests' || s.remaining >= 1) continue
      const retryAt = this.retryAt(input, s, 1, at)
      if (!full || (retryAt ?? Number.POSITIVE_INFINITY) > (full.retryAt ?? Number.POSITIVE_INFINITY))
        full = { state: s, needs: 1, retryAt }
    }
    if (full) return { refusal: full }
    const a = outputAllowance({
      requested: c.wantOutput,
      modelMax: c.wantOutput,
      inputBound: c.inputTokens,
      states,
      price: c.price,
    })
    if (!a.ok) {
      const retryAt =
        a.state.row.window === 'period' ? a.state.resetAt : this.retryAt(input, a.state, a.needs, at)
      return { refusal: { state: a.state, needs: a.needs, retryAt } }
    }
    const tokens = c.inputTokens + a.tokens
    let budgets = 0
    // Each row charged: its sums or counter, and its state as the reservation leaves it.
    for (const s of states) {
      const row = s.row
      const state = row.scope === 'account' ? account! : key!
      const amount = row.resource === 'requests' ? 1 : row.resource === 'tokens' ? tokens : a.highestCost
      if (row.window === 'period') {
        const period = row.period!
        const start = periods.of(period).start
        setSpent(state, period, start, spentOf(state, period, start) + amount)
        budgets |= PERIOD_CODE[period] << (row.scope === 'account' ? 0 : 2)
      } else {
        if (row.window === 'minute') {
          if (row.resource === 'requests') state.rm! += 1
          else state.tm! += amount
        } else if (row.resource === 'requests') state.rd! += 1
        else state.td! += amount
        s.resetAt ??= at + this.span(row)
      }
      s.used += amount
      s.remaining = Math.max(0, s.remaining - amount)
    }
    if (account) firstAt(account, at)
    if (key) {
      firstAt(key, at)
      this.scopes.saveKey(`k:${input.keyId}`, key)
    }
    return {
      charge: [input.keyId, tokens, a.highestCost, budgets, scoped.settles ? 0 : 1],
      state: account,
      reservation: {
        tokens,
        micros: a.highestCost,
        outputTokens: a.tokens,
        clampedBy: a.clampedBy,
        states,
        handle: {
          account: input.accountId,
          at,
          seq,
          keyId: input.keyId,
          budgets,
          reservedTokens: tokens,
          reservedMicros: a.highestCost,
          keyRows: key !== null,
        } satisfies Handle,
      },
    }
  }

  /**
   * Each row's use in its scope's state (moved to the windows' edges at the periods' time). `held`:
   * a hold's growth, the periods' time its admission's — a period row whose counter has moved on
   * to a later period (the scope charged since) no longer holds that period's spend, and reads full.
   */
  private statesOf(rows: LimitRow[], account: State | null, key: State | null, held = false): RowState[] {
    const periods = this.periods
    return rows.map((row) => {
      const state = row.scope === 'account' ? account! : key!
      if (row.window === 'period') {
        const p = periods.of(row.period!)
        const used =
          held && counterStart(state, row.period!) !== p.start
            ? row.capacity
            : spentOf(state, row.period!, p.start)
        return rowState(row, used, null, p.resetsAt)
      }
      const minute = row.window === 'minute'
      const used = (
        row.resource === 'requests' ? (minute ? state.rm : state.rd) : minute ? state.tm : state.td
      )!
      const first = minute ? state.m_first : state.d_first
      return rowState(row, used, used > 0 ? first : null, this.span(row))
    })
  }

  /**
   * Grows a live reservation (`Limiter.extend`) inside the write lock: each window row's use at `at`
   * as admission reads it (`stored`: the account's newest admission's state), each money row's in
   * the period of the hold's admission (the one its growth is charged to: past a period's edge the
   * old period's budget bounds it, not the new one's), and when every token row leaves `q.tokens`
   * and every money row `q.micros`, the charge row grows and the scopes' sums and counters with it,
   * as a settlement above the reservation would move them (`Changes`). The scopes' states moved to
   * `at` are not written: moving is a cache of what the charges say, and the stored ones still hold
   * the grown charge. The handle is the caller's to update after the commit.
   */
  extend(q: Extension, at: number, stored: Stored | null): Extended {
    const h = q.handle as Handle
    const { account, key } = this.load(q.accountId, q.keyId, q.rows, stored, at, false)
    this.periods.at(h.at)
    const states = this.statesOf(q.rows, account, key, true)
    const amount = (s: RowState) =>
      s.row.resource === 'tokens' ? q.tokens : s.row.resource === 'microdollars' ? q.micros : 0
    if (states.some((s) => s.remaining < amount(s))) return { tokens: 0, micros: 0, states }
    if (this.q.grow.run(h.account, h.at, h.seq, q.tokens, q.micros).changes !== 1)
      return { tokens: 0, micros: 0, states: [] }
    const changes = new Changes(this.periods)
    changes.add(h, q.tokens, q.micros)
    this.apply(changes)
    for (const s of states) {
      s.used += amount(s)
      s.remaining = Math.max(0, s.remaining - amount(s))
    }
    return { tokens: q.tokens, micros: q.micros, states }
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

  /**
   * Settles a flush's batch, each charge once (a second settlement of the same charge changes
   * nothing); inside the flush's transaction.
   */
  settle(batch: Settlement[]): void {
    const changes = new Changes(this.periods)
    for (const s of batch) {
      const h = s.handle as Handle
      // A charge already settled (or swept, or earlier in the batch) is left alone.
      if (this.q.settle.run(h.account, h.at, h.seq, s.tokens, s.micros).changes === 1)
        changes.add(h, s.tokens - h.reservedTokens, s.micros - h.reservedMicros)
    }
    this.apply(changes)
  }

  /** Moves the sums and spend the settled charges were charged to. */
  private apply(c: Changes): void {
    for (const [account, changes] of c.accounts) this.scopes.settleAccount(account, changes)
    for (const [key, changes] of c.keys) this.scopes.settleKey(`k:${key}`, changes)
  }

  /**
   * Settles to themselves up to `limit` reservations made before `before` and never settled;
   * returns how many. It reads, account by account along the primary key, the charges made since the last
   * sweep's bound (no index to keep on the hot path): each charge is read by one sweep, and its
   * `created_at` is never older than the clock of the process that admitted it.
   */
  sweep(before: number, limit: number): number {
    const mark = this.q.mark.get()?.mark ?? 0
    if (before <= mark) return 0
    const rows: Stale[] = []
    for (let a = this.q.accounts.get(-1); a && rows.length < limit; a = this.q.accounts.get(a.account_id))
      rows.push(...this.q.stale.all(a.account_id, mark, before, limit - rows.length))
    // Each settled to itself, the most it could have cost (its process was killed: the upstream
    // may have answered it in full, and did if the kill came between the answer and the usage
    // flush): marked settled, its windows and spend unchanged, so nothing is over-admitted.
    for (const r of rows) this.q.settle.run(r.account_id, r.created_at, r.seq, r.tokens, r.charge_micros)
    // Every charge made before `before` is settled now, unless the limit cut the sweep short.
    if (rows.length < limit) this.q.setMark.run(before)
    return rows.length
  }

  /**
   * Deletes up to `chunk` admissions with settled charges made a day window before `before` (the
   * day window's start: a running sum moved within a span reads back at most that far), account
   * by account along the primary key, each account's newest kept. Returns how many.
   */
  prune(before: number, chunk: number): number {
    let left = chunk
    for (let a = this.q.accounts.get(-1); a && left > 0; a = this.q.accounts.get(a.account_id)) {
      left -= this.q.prune.run(a.account_id, before - this.spans.dayMs, left).changes
    }
    return chunk - left
  }
}

/** A SQLite handle after its charge grew by `e` (committed): settlement works from what the row holds. */
export function grown(handle: object, e: Extended): void {
  const h = handle as Handle
  h.reservedTokens += e.tokens
  h.reservedMicros += e.micros
}

/** A charge's rows by scope, and whether any of them settles (tokens or money): once per rows list. */
interface Scoped {
  account: LimitRow[]
  key: LimitRow[]
  settles: boolean
}

const SCOPED = new WeakMap<LimitRow[], Scoped>()

function byScope(rows: LimitRow[]): Scoped {
  let s = SCOPED.get(rows)
  if (!s) {
    s = {
      account: rows.filter((r) => r.scope === 'account'),
      key: rows.filter((r) => r.scope === 'key'),
      settles: rows.some((r) => r.resource !== 'requests'),
    }
    SCOPED.set(rows, s)
  }
  return s
}

/** A kept span's oldest charge is this one when it held none. */
function firstAt(s: State, at: number): void {
  if (s.minute) s.m_first ??= at
  if (s.day) s.d_first ??= at
}
