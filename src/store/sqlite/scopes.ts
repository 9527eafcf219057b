/**
 * @module
 * A scope's limits on SQLite (`limit_scopes`, migrations-v12.ts): one row per scope holding, per
 * span, the running sums (the charges made after `start`) and the oldest charge after it, and a
 * money counter per calendar period kind. Admission reads the row and what left each window
 * since in one statement, and writes the row back in one.
 *
 * Moving a span to the window's edge subtracts the charges that left — each leaves once, so a
 * window is never summed on the hot path — and while the oldest charge is still inside nothing
 * has left, so nothing is read. A span not moved for a whole window (its old charges may be
 * pruned: prune keeps two day windows), or a sum not kept, is summed afresh from the charges.
 */
import type { Database, Statement } from 'bun:sqlite'
import type { CalendarPeriod, LimitRow } from '../../limits/rows.ts'
import type { WindowSpans } from '../../limits/types.ts'

/** A span's sums after moving it to the window's edge; a sum is null when no row asks for it. */
export interface SpanSums {
  start: number
  /** The oldest charge in the window (null: none). */
  first: number | null
  requests: number | null
  tokens: number | null
}

/** A money counter: micro-dollars charged in the period starting at `start`. */
export interface Counter {
  start: number | null
  micros: number | null
}

/** One scope's row as admission found it, its spans moved to the windows' edges. */
export interface ScopeSums {
  minute: SpanSums | null
  day: SpanSums | null
  money: Record<CalendarPeriod, Counter>
}

interface Read {
  m_start: number | null
  m_first: number | null
  d_start: number | null
  d_first: number | null
  rm: number | null
  rd: number | null
  tm: number | null
  td: number | null
  pd_start: number | null
  pd: number | null
  pw_start: number | null
  pw: number | null
  pm_start: number | null
  pm: number | null
  m_gone_n: number | null
  m_gone_t: number | null
  m_next: number | null
  d_gone_n: number | null
  d_gone_t: number | null
  d_next: number | null
}

type Span = 'm' | 'd'
type Kind = 'account' | 'key'
type ReadArgs = [string, number, number, number, number, number, string]
type Fresh = { n: number; t: number; first: number | null }
type Put = [string, ...Array<number | null>]

/** The period kinds' columns. */
const P = { day: 'pd', week: 'pw', month: 'pm' } as const

/**
 * `?1` scope, `?2` account, `?3`/`?4` the minute's edge and the edge a span before it (below it a
 * start is too old to move), `?5`/`?6` the same for the day, `?7` the key (key scopes only). A
 * CASE runs its subquery only when charges did leave.
 */
function readSql(key: boolean): string {
  const of = `account_id = ?2${key ? ' AND key_id = ?7' : ' AND ?7 IS NOT NULL'}`
  const span = (x: Span, edge: string, floor: string) => {
    const left = `s.${x}_first <= ${edge} AND s.${x}_start > ${floor}`
    const gone = `FROM charges WHERE ${of} AND created_at > s.${x}_start AND created_at <= ${edge}`
    return `CASE WHEN ${left} AND s.r${x} IS NOT NULL THEN (SELECT COUNT(*) ${gone}) END AS ${x}_gone_n,
      CASE WHEN ${left} AND s.t${x} IS NOT NULL THEN (SELECT COALESCE(SUM(tokens), 0) ${gone}) END AS ${x}_gone_t,
      CASE WHEN ${left} THEN (SELECT MIN(created_at) FROM charges WHERE ${of} AND created_at > ${edge}) END AS ${x}_next`
  }
  return `SELECT s.*, ${span('m', '?3', '?4')}, ${span('d', '?5', '?6')}
    FROM (SELECT 1) LEFT JOIN limit_scopes s ON s.scope = ?1`
}

function freshSql(key: boolean): string {
  return `SELECT COUNT(*) AS n, COALESCE(SUM(tokens), 0) AS t, MIN(created_at) AS first FROM charges
    WHERE account_id = ?1 AND created_at > ?2 ${key ? 'AND key_id = ?3' : 'AND ?3 IS NOT NULL'}`
}

const PUT = `INSERT INTO limit_scopes (scope, m_start, m_first, d_start, d_first, rm, rd, tm, td,
    pd_start, pd, pw_start, pw, pm_start, pm) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (scope) DO UPDATE SET m_start = excluded.m_start, m_first = excluded.m_first,
    d_start = excluded.d_start, d_first = excluded.d_first, rm = excluded.rm, rd = excluded.rd,
    tm = excluded.tm, td = excluded.td, pd_start = excluded.pd_start, pd = excluded.pd,
    pw_start = excluded.pw_start, pw = excluded.pw, pm_start = excluded.pm_start, pm = excluded.pm`

export class ScopeQueries {
  private readonly read: Record<Kind, Statement<Read, ReadArgs>>
  private readonly fresh: Record<Kind, Statement<Fresh, [number, number, string]>>
  private readonly put
  private readonly starts
  private readonly adjust

  constructor(
    db: Database,
    private readonly spans: WindowSpans,
  ) {
    this.read = { account: db.query(readSql(false)), key: db.query(readSql(true)) }
    this.fresh = { account: db.query(freshSql(false)), key: db.query(freshSql(true)) }
    this.put = db.query<null, Put>(PUT)
    this.starts = db.query<
      {
        m_start: number
        d_start: number
        pd_start: number | null
        pw_start: number | null
        pm_start: number | null
      },
      [string]
    >('SELECT m_start, d_start, pd_start, pw_start, pm_start FROM limit_scopes WHERE scope = ?')
    // A sum or counter not kept (null) stays null.
    this.adjust = db.query<null, [number, number, number, number, number, string]>(
      'UPDATE limit_scopes SET tm = tm + ?, td = td + ?, pd = pd + ?, pw = pw + ?, pm = pm + ? WHERE scope = ?',
    )
  }

  /**
   * The scope's row with its spans moved to the windows' edges at `at` (inside the write lock:
   * `save` writes it with the charge; a refusal leaves the row as it was).
   */
  load(kind: Kind, scope: string, accountId: number, keyId: string, rows: LimitRow[], at: number): ScopeSums {
    const { minuteMs, dayMs } = this.spans
    const r = this.read[kind].get(
      scope,
      accountId,
      at - minuteMs,
      at - 2 * minuteMs,
      at - dayMs,
      at - 2 * dayMs,
      keyId,
    )!
    const wants = (window: 'minute' | 'day', resource: 'requests' | 'tokens') =>
      rows.some((x) => x.window === window && x.resource === resource)
    const move = (x: Span, span: number, wantR: boolean, wantT: boolean): SpanSums | null => {
      if (!wantR && !wantT) return null
      const edge = at - span
      const start = r[`${x}_start`]
      const rs = r[`r${x}`]
      const ts = r[`t${x}`]
      // As the statement decided: a start a whole span before the edge is too old to move.
      if (start === null || start <= edge - span || (wantR && rs === null) || (wantT && ts === null)) {
        const f = this.fresh[kind].get(accountId, edge, keyId)!
        return { start: edge, first: f.first, requests: wantR ? f.n : null, tokens: wantT ? f.t : null }
      }
      const first = r[`${x}_first`]
      if (first !== null && first <= edge) {
        return {
          start: edge,
          first: r[`${x}_next`],
          requests: wantR ? rs! - r[`${x}_gone_n`]! : null,
          tokens: wantT ? ts! - r[`${x}_gone_t`]! : null,
        }
      }
      return { start, first, requests: wantR ? rs : null, tokens: wantT ? ts : null }
    }
    return {
      minute: move('m', minuteMs, wants('minute', 'requests'), wants('minute', 'tokens')),
      day: move('d', dayMs, wants('day', 'requests'), wants('day', 'tokens')),
      money: {
        day: { start: r.pd_start, micros: r.pd },
        week: { start: r.pw_start, micros: r.pw },
        month: { start: r.pm_start, micros: r.pm },
      },
    }
  }

  /** Writes the scope's row back (after `load` and the charge added to it). */
  save(scope: string, s: ScopeSums, at: number): void {
    const m = s.minute ?? { start: at - this.spans.minuteMs, first: null, requests: null, tokens: null }
    const d = s.day ?? { start: at - this.spans.dayMs, first: null, requests: null, tokens: null }
    const { day, week, month } = s.money
    this.put.run(
      scope,
      m.start,
      m.first,
      d.start,
      d.first,
      m.requests,
      d.requests,
      m.tokens,
      d.tokens,
      day.start,
      day.micros,
      week.start,
      week.micros,
      month.start,
      month.micros,
    )
  }

  /**
   * Adds settlements' differences to the scope's row: per charge its time, tokens settled minus
   * reserved (to each span whose sums still hold the charge), and micro-dollars settled minus
   * reserved with the period it was charged to (to that counter while it is still the one kept).
   */
  settle(
    scope: string,
    changes: Array<{ at: number; dt: number; dm: number; period: PeriodStart | null }>,
  ): void {
    const s = this.starts.get(scope)
    if (!s) return
    const add = { m: 0, d: 0, day: 0, week: 0, month: 0 }
    for (const c of changes) {
      if (c.at > s.m_start) add.m += c.dt
      if (c.at > s.d_start) add.d += c.dt
      if (c.period && s[`${P[c.period.period]}_start`] === c.period.start) add[c.period.period] += c.dm
    }
    if (add.m || add.d || add.day || add.week || add.month)
      this.adjust.run(add.m, add.d, add.day, add.week, add.month, scope)
  }
}

/** The period a charge's money went to. */
export interface PeriodStart {
  period: CalendarPeriod
  start: number
}

/** What `money` has charged in the period starting at `start` (0 when its counter is another period's). */
export const spentIn = (c: Counter, start: number): number => (c.start === start ? (c.micros ?? 0) : 0)
