/**
 * @module
 * A scope's limit state on SQLite: per span, the running sums (the charges made after `start`) and
 * the oldest charge after it, and a money counter per calendar period kind. An account's state is
 * in its newest admission row, read by a transaction's first admission of the account and written
 * by the insert of its last one (limiter.ts; migrations-v14.ts: no page of its own in the commit);
 * a key's is its `limit_scopes` row (migrations-v12.ts), read with what left its windows in one
 * statement and written in one.
 *
 * Moving a span to the window's edge subtracts the charges that left — each leaves once, so a
 * window is never summed on the hot path — and while the oldest charge is still inside nothing
 * has left, so nothing is read. Under a steady load charges leave one by one, so an admission
 * that asks what left an account's span also reads the next charges to leave, and later
 * admissions of it (in any transaction) take theirs from those while they cover their edge
 * (`Departures`): only settled charges are kept, and a settled charge never changes. A span not
 * moved for a whole window (its old charges may be pruned: prune keeps two day windows), or a sum
 * not kept, is summed afresh from the charges.
 */
import type { Database, Statement } from 'bun:sqlite'
import type { LimitRow } from '../../limits/rows.ts'
import type { WindowSpans } from '../../limits/types.ts'
import { setBounded } from '../../util/map.ts'
import { Departures, type Gone } from './departures.ts'
import { type Change, State, type StateValues, type Stored, stateValues } from './scope-state.ts'

/** A key's row read with what left each span (null: nothing to read, see `readSql`). */
interface KeyRead extends Stored {
  m_gone_n: number | null
  m_gone_t: number | null
  m_next: number | null
  d_gone_n: number | null
  d_gone_t: number | null
  d_next: number | null
}

type Span = 'm' | 'd'
type ReadArgs = [string, number, number, number, number, number, string]
type Fresh = { n: number; t: number; first: number | null }

/** The period kinds' counters' start columns. */
const PERIOD_START = { day: 'pd_start', week: 'pw_start', month: 'pm_start' } as const

/**
 * For retention, within an account (`?1`): the rows older than its newest admission when that one
 * holds the account's limit state (once one held it, every commit leaves it on the newest), else all.
 */
export const KEEPS_STATE = `created_at < COALESCE((SELECT CASE WHEN m_start IS NOT NULL THEN created_at END
    FROM admissions WHERE account_id = ?1 ORDER BY created_at DESC, seq DESC LIMIT 1), 9007199254740991)`

/** The charged admissions of the scope: an account's, or a key's (its charges carry its id). */
const CHARGED = 'tokens IS NOT NULL'

/**
 * A key's row and what left its windows. `?1` scope, `?2` account, `?3`/`?4` the minute's edge
 * and the edge a span before it (below it a start is too old to move), `?5`/`?6` the same for the
 * day, `?7` the key. A CASE runs its subquery only when charges did leave.
 */
const KEY_READ = (() => {
  const of = `account_id = ?2 AND key_id = ?7 AND ${CHARGED}`
  const span = (x: Span, edge: string, floor: string) => {
    const left = `s.${x}_first <= ${edge} AND s.${x}_start > ${floor}`
    const gone = `FROM admissions WHERE ${of} AND created_at > s.${x}_start AND created_at <= ${edge}`
    return `CASE WHEN ${left} AND s.r${x} IS NOT NULL THEN (SELECT COUNT(*) ${gone}) END AS ${x}_gone_n,
      CASE WHEN ${left} AND s.t${x} IS NOT NULL THEN (SELECT COALESCE(SUM(tokens), 0) ${gone}) END AS ${x}_gone_t,
      CASE WHEN ${left} THEN (SELECT MIN(created_at) FROM admissions WHERE ${of} AND created_at > ${edge}) END AS ${x}_next`
  }
  return `SELECT s.*, ${span('m', '?3', '?4')}, ${span('d', '?5', '?6')}
    FROM (SELECT 1) LEFT JOIN limit_scopes s ON s.scope = ?1`
})()

/** What left an account's span: `?1` account, `?2` the span's start, `?3` the window's edge. */
const ACCOUNT_GONE = `SELECT COUNT(*) AS n, COALESCE(SUM(tokens), 0) AS t,
    (SELECT MIN(created_at) FROM admissions WHERE account_id = ?1 AND created_at > ?3 AND ${CHARGED}) AS next
  FROM admissions WHERE account_id = ?1 AND created_at > ?2 AND created_at <= ?3 AND ${CHARGED}`

/**
 * The account's next charges to leave a span after its edge `?2`, oldest first, and whether each
 * is settled. The limit is a constant: bound as a parameter it costs 4 µs more a statement
 * (bun:sqlite 1.4, measured).
 */
const ACCOUNT_NEXT = `SELECT created_at, tokens, settled FROM admissions
  WHERE account_id = ?1 AND created_at > ?2 AND ${CHARGED} ORDER BY created_at, seq LIMIT 16`

/** Accounts whose next departures are kept; past it the cache starts again (32 numbers a span each). */
const KEPT_ACCOUNTS = 4_096

function freshSql(key: boolean): string {
  return `SELECT COUNT(*) AS n, COALESCE(SUM(tokens), 0) AS t, MIN(created_at) AS first FROM admissions
    WHERE account_id = ?1 AND created_at > ?2 AND ${CHARGED} ${key ? 'AND key_id = ?3' : 'AND ?3 IS NOT NULL'}`
}

const PUT = `INSERT INTO limit_scopes (scope, m_start, m_first, d_start, d_first, rm, rd, tm, td,
    pd_start, pd, pw_start, pw, pm_start, pm) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (scope) DO UPDATE SET m_start = excluded.m_start, m_first = excluded.m_first,
    d_start = excluded.d_start, d_first = excluded.d_first, rm = excluded.rm, rd = excluded.rd,
    tm = excluded.tm, td = excluded.td, pd_start = excluded.pd_start, pd = excluded.pd,
    pw_start = excluded.pw_start, pw = excluded.pw, pm_start = excluded.pm_start, pm = excluded.pm`

/** A state's starts, to tell which of a settlement's changes it still holds. */
interface Starts {
  m_start: number | null
  d_start: number | null
  pd_start: number | null
  pw_start: number | null
  pm_start: number | null
}

export class ScopeQueries {
  private readonly keyRead: Statement<KeyRead, ReadArgs>
  private readonly accountGone: Statement<Gone, [number, number, number]>
  private readonly accountNext: Statement<unknown, [number, number]>
  /** Each account's next charges to leave its minute and day spans, kept across transactions. */
  private readonly departures = new Map<number, { m: Departures | null; d: Departures | null }>()
  private readonly fresh: Record<'account' | 'key', Statement<Fresh, [number, number, string]>>
  private readonly put
  private readonly keyStarts
  private readonly keyAdjust
  private readonly accountStarts
  private readonly accountAdjust

  constructor(
    db: Database,
    private readonly spans: WindowSpans,
  ) {
    this.keyRead = db.query(KEY_READ)
    this.accountGone = db.query(ACCOUNT_GONE)
    this.accountNext = db.query(ACCOUNT_NEXT)
    this.fresh = { account: db.query(freshSql(false)), key: db.query(freshSql(true)) }
    this.put = db.query<null, [string, ...StateValues]>(PUT)
    this.keyStarts = db.query<Starts, [string]>(
      'SELECT m_start, d_start, pd_start, pw_start, pm_start FROM limit_scopes WHERE scope = ?',
    )
    // A sum or counter not kept (null) stays null.
    this.keyAdjust = db.query<null, [number, number, number, number, number, string]>(
      'UPDATE limit_scopes SET tm = tm + ?, td = td + ?, pd = pd + ?, pw = pw + ?, pm = pm + ? WHERE scope = ?',
    )
    this.accountStarts = db.query<Starts & { created_at: number; seq: number }, [number]>(
      `SELECT created_at, seq, m_start, d_start, pd_start, pw_start, pm_start FROM admissions
       WHERE account_id = ? ORDER BY created_at DESC, seq DESC LIMIT 1`,
    )
    this.accountAdjust = db.query<null, [number, number, number, number, number, number, number, number]>(
      `UPDATE admissions SET tm = tm + ?, td = td + ?, pd = pd + ?, pw = pw + ?, pm = pm + ?
       WHERE account_id = ? AND created_at = ? AND seq = ?`,
    )
  }

  /**
   * An account's state (`stored`: its newest admission row's, as the admission read it) with its
   * spans moved to the windows' edges at `at`; inside the write lock. `keep`: no admission of the
   * account has been written in this transaction yet, so every row read was committed before it
   * and the next departures read may be kept (should this commit fail, none of its rows is kept).
   */
  loadAccount(accountId: number, stored: Stored, rows: LimitRow[], at: number, keep: boolean): State {
    const s = new State(stored)
    this.moveAll(s, null, rows, at, accountId, '', keep)
    return s
  }

  /** A key's `limit_scopes` row with its spans moved to the windows' edges at `at` (inside the write lock). */
  loadKey(scope: string, accountId: number, keyId: string, rows: LimitRow[], at: number): State {
    const { minuteMs, dayMs } = this.spans
    const r = this.keyRead.get(
      scope,
      accountId,
      at - minuteMs,
      at - 2 * minuteMs,
      at - dayMs,
      at - 2 * dayMs,
      keyId,
    )!
    const s = new State(r)
    this.moveAll(s, r, rows, at, accountId, keyId, false)
    return s
  }

  /** `key`: the key's row as read with what left its windows; null for an account. */
  private moveAll(
    s: State,
    key: KeyRead | null,
    rows: LimitRow[],
    at: number,
    accountId: number,
    keyId: string,
    keep: boolean,
  ): void {
    const w = wantsOf(rows)
    const { minuteMs, dayMs } = this.spans
    s.minute = w.wantRm || w.wantTm
    if (s.minute) this.move('m', s, at - minuteMs, minuteMs, w.wantRm, w.wantTm, key, accountId, keyId, keep)
    else {
      s.m_start = at - minuteMs
      s.m_first = s.rm = s.tm = null
    }
    s.day = w.wantRd || w.wantTd
    if (s.day) this.move('d', s, at - dayMs, dayMs, w.wantRd, w.wantTd, key, accountId, keyId, keep)
    else {
      s.d_start = at - dayMs
      s.d_first = s.rd = s.td = null
    }
  }

  /** One span's sums (`start`, `first`, requests, tokens) moved to `edge`, in place; a sum no row reads is null. */
  private move(
    x: Span,
    s: State,
    edge: number,
    span: number,
    wantR: boolean,
    wantT: boolean,
    key: KeyRead | null,
    accountId: number,
    keyId: string,
    keep: boolean,
  ): void {
    const m = x === 'm'
    const start = m ? s.m_start : s.d_start
    const first = m ? s.m_first : s.d_first
    let rs = m ? s.rm : s.rd
    let ts = m ? s.tm : s.td
    let nextStart = start
    let nextFirst = first
    // A start a whole span before the edge is too old to move (its charges may be pruned).
    if (start === null || start <= edge - span || (wantR && rs === null) || (wantT && ts === null)) {
      const f = this.fresh[key ? 'key' : 'account'].get(accountId, edge, keyId)!
      nextStart = edge
      nextFirst = f.first
      rs = f.n
      ts = f.t
    } else if (first !== null && first <= edge) {
      const g = key ? keyGone(key, x) : this.gone(accountId, x, start, edge, keep)
      nextStart = edge
      nextFirst = g.next
      rs = rs! - g.n
      ts = ts! - g.t
    }
    if (m) {
      s.m_start = nextStart
      s.m_first = nextFirst
      s.rm = wantR ? rs : null
      s.tm = wantT ? ts : null
    } else {
      s.d_start = nextStart
      s.d_first = nextFirst
      s.rd = wantR ? rs : null
      s.td = wantT ? ts : null
    }
  }

  /**
   * What left an account's span between `start` and `edge`. Charges leave one by one under a
   * steady load, so each admission would ask: one asks, and reads the next charges to leave for
   * the admissions of the account after it, which take theirs from those while they cover their
   * edge.
   */
  private gone(accountId: number, x: Span, start: number, edge: number, keep: boolean): Gone {
    let kept = this.departures.get(accountId)
    const g = kept?.[x]?.between(start, edge)
    if (g) return g
    const asked = this.accountGone.get(accountId, start, edge)!
    if (!keep) return asked
    // A window whose next charges are unsettled (streams still running) keeps few: after a read
    // that kept fewer than two, the next SHORT_READ_SKIPS asks go without one.
    const last = kept?.[x]
    if (last && last.skips > 0) {
      last.skips--
      return asked
    }
    if (!kept) {
      kept = { m: null, d: null }
      setBounded(this.departures, accountId, kept, KEPT_ACCOUNTS)
    }
    kept[x] = Departures.read(edge, this.accountNext.values(accountId, edge) as [number, number, number][])
    return asked
  }

  /** Writes a key's row back (after `loadKey` and the charge added to it). */
  saveKey(scope: string, s: State): void {
    this.put.run(scope, ...stateValues(s))
  }

  /**
   * Adds settlements' differences to a scope's state: per charge its time, tokens settled minus
   * reserved (to each span whose sums still hold the charge), and micro-dollars settled minus
   * reserved with the period it was charged to (to that counter while it is still the one kept).
   * An account's state is its newest admission's.
   */
  settleAccount(accountId: number, changes: Change[]): void {
    const s = this.accountStarts.get(accountId)
    if (!s) return
    const add = added(s, changes)
    if (add) this.accountAdjust.run(...add, accountId, s.created_at, s.seq)
  }

  settleKey(scope: string, changes: Change[]): void {
    const s = this.keyStarts.get(scope)
    if (!s) return
    const add = added(s, changes)
    if (add) this.keyAdjust.run(...add, scope)
  }
}

/** What left a key's span, as its row was read with it. */
function keyGone(r: KeyRead, x: Span): Gone {
  return x === 'm'
    ? { n: r.m_gone_n ?? 0, t: r.m_gone_t ?? 0, next: r.m_next }
    : { n: r.d_gone_n ?? 0, t: r.d_gone_t ?? 0, next: r.d_next }
}

/** Which running sums a scope's rows read. */
interface Wants {
  wantRm: boolean
  wantTm: boolean
  wantRd: boolean
  wantTd: boolean
}

const WANTS = new WeakMap<LimitRow[], Wants>()

/** The sums `rows` read, once per rows list. */
function wantsOf(rows: LimitRow[]): Wants {
  let w = WANTS.get(rows)
  if (!w) {
    const has = (window: LimitRow['window'], resource: LimitRow['resource']) =>
      rows.some((x) => x.window === window && x.resource === resource)
    w = {
      wantRm: has('minute', 'requests'),
      wantTm: has('minute', 'tokens'),
      wantRd: has('day', 'requests'),
      wantTd: has('day', 'tokens'),
    }
    WANTS.set(rows, w)
  }
  return w
}

/** What the changes add to the state's minute and day sums and day, week and month counters (null: nothing). */
function added(s: Starts, changes: Change[]): [number, number, number, number, number] | null {
  const add = { m: 0, d: 0, day: 0, week: 0, month: 0 }
  for (const c of changes) {
    if (s.m_start !== null && c.at > s.m_start) add.m += c.dt
    if (s.d_start !== null && c.at > s.d_start) add.d += c.dt
    if (c.period && s[PERIOD_START[c.period]] === c.start) add[c.period] += c.dm
  }
  return add.m || add.d || add.day || add.week || add.month
    ? [add.m, add.d, add.day, add.week, add.month]
    : null
}
