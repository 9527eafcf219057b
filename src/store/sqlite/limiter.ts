/**
 * @module
 * Exact rolling-window rate limiting on the admissions table (the limiter's own log: account,
 * time, sequence number — one narrow row per admitted request, see migrations.ts v6). Check and
 * consume run in one `BEGIN IMMEDIATE` transaction, so concurrent requests — in this process or
 * in any other process sharing the database file — are serialised by SQLite's write lock and a
 * window never admits more than its limit.
 *
 * Each admitted request of an account gets the next sequence number and a `created_at` that
 * never goes backwards, so the number of requests in a window is `last.seq − first.seq + 1`
 * where `first` is the oldest row inside it: two seeks on the table's primary key, whatever
 * the limit. The request log row is written once, complete, with the outcome (usage.ts).
 *
 * A metered admission's row also holds its charge and the account's limit state after it
 * (migrations-v14.ts): read with the account's newest row, written with the new one, so it costs
 * its commit no page of its own. An admission that charges the account nothing carries the
 * newest row's state forward unchanged.
 *
 * Only the newest row's state is ever read, so within one transaction (a group commit) it is
 * written once per account, on the account's last row: the rows before it hold their charge alone
 * and the next admission of the account takes its newest row and state from memory, not the
 * table. An account whose last admission in the batch is refused (or fails) has its state put
 * back on its newest row before the commit: at every commit the newest row holds it.
 */
import type { Database } from 'bun:sqlite'
import {
  DEFAULT_SPANS,
  type Extended,
  type Extension,
  type SuspensionPolicy,
  type WindowSpans,
} from '../../limits/types.ts'
import { consumed, unlimited, windowOf } from '../../limits/windows.ts'
import type { AdmitInput, AdmitResult, WindowLimit } from '../types.ts'
import { isBusy } from './errors.ts'
import { type ChargeValues, grown, ReserveQueries } from './reserve.ts'
import { type StateValues, type Stored, stateValues } from './scope-state.ts'
import { KEEPS_STATE } from './scopes.ts'

interface Row {
  seq: number
  created_at: number
}

/** The account's newest admission: where the window's count ends, and the account's limit state. */
type Last = Row & Stored

type Wide = [
  number,
  number,
  number,
  string | null,
  number | null,
  number | null,
  number | null,
  number | null,
  ...StateValues,
]

export class LimiterQueries {
  private readonly q
  /** Tokens, money and a key's own rows, charged in the same transaction (reserve.ts). */
  readonly reserve: ReserveQueries
  private readonly admitTx: (input: AdmitInput) => AdmitResult
  private readonly admitAllTx: (inputs: AdmitInput[]) => AdmitResult[]
  private readonly admitManyTx: (inputs: AdmitInput[]) => Array<AdmitResult | Error>
  private readonly extendTx: (q: Extension) => Extended

  constructor(
    db: Database,
    private readonly spans: WindowSpans = DEFAULT_SPANS,
  ) {
    this.reserve = new ReserveQueries(db, spans)
    this.q = {
      // (created_at, seq) orders an account's rows as seq alone does: neither goes backwards.
      last: db.query<Last, [number]>(
        `SELECT seq, created_at, m_start, m_first, d_start, d_first, rm, rd, tm, td, pd_start, pd, pw_start, pw,
           pm_start, pm FROM admissions WHERE account_id = ? ORDER BY created_at DESC, seq DESC LIMIT 1`,
      ),
      firstAfter: db.query<Row, [number, number]>(
        'SELECT seq, created_at FROM admissions WHERE account_id = ? AND created_at > ? ORDER BY created_at, seq LIMIT 1',
      ),
      /** The row `skip` places after the window's first (from >= its created_at, which starts at it). */
      nthFrom: db.query<Row, [number, number, number]>(
        'SELECT seq, created_at FROM admissions WHERE account_id = ? AND created_at >= ? ORDER BY created_at, seq LIMIT 1 OFFSET ?',
      ),
      insert: db.query<null, [number, number, number]>(
        'INSERT INTO admissions (account_id, created_at, seq) VALUES (?, ?, ?)',
      ),
      /** An admission with a charge, its account's state left to a later row of the same transaction. */
      insertCharge: db.query<null, [number, number, number, ...ChargeValues]>(
        `INSERT INTO admissions (account_id, created_at, seq, key_id, tokens, charge_micros, budgets, settled)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      /** The account's state onto a row written without it (the batch's later admissions of it were refused). */
      carry: db.query<null, [...StateValues, number, number, number]>(
        `UPDATE admissions SET (m_start, m_first, d_start, d_first, rm, rd, tm, td, pd_start, pd, pw_start, pw,
           pm_start, pm) = (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE account_id = ? AND created_at = ? AND seq = ?`,
      ),
      /** An admission with a charge, or on an account whose limit state it carries. */
      insertWide: db.query<null, Wide>(
        `INSERT INTO admissions (account_id, created_at, seq, key_id, tokens, charge_micros, budgets, settled,
           m_start, m_first, d_start, d_first, rm, rd, tm, td, pd_start, pd, pw_start, pw, pm_start, pm)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      accounts: db.query<{ account_id: number }, [number]>(
        'SELECT account_id FROM admissions WHERE account_id > ? ORDER BY account_id LIMIT 1',
      ),
      // Admissions without a charge (reserve.ts prunes those with one); an account's newest is
      // kept when it holds the account's limit state.
      prune: db.query<null, [number, number, number]>(
        `DELETE FROM admissions WHERE (account_id, created_at, seq) IN
           (SELECT account_id, created_at, seq FROM admissions
            WHERE account_id = ?1 AND created_at < ?2 AND tokens IS NULL
              AND ${KEEPS_STATE}
            ORDER BY created_at, seq LIMIT ?3)`,
      ),
      countRequest: db.query<null, [number, number, string]>(
        `INSERT INTO usage_minutes (account_id, minute, model, requests) VALUES (?, ?, ?, 1)
         ON CONFLICT (account_id, minute, model) DO UPDATE SET requests = requests + 1`,
      ),
      // Fixed windows per key: restart the count when the window has passed, else add one.
      reject: db.query<{ rejections: number }, [number, number, number, string]>(
        `UPDATE api_keys SET
           rejections = CASE WHEN rejections_since IS NULL OR rejections_since <= ? THEN 1 ELSE rejections + 1 END,
           rejections_since = CASE WHEN rejections_since IS NULL OR rejections_since <= ? THEN ? ELSE rejections_since END
         WHERE id = ? RETURNING rejections`,
      ),
      suspend: db.query<null, [number, string]>(
        'UPDATE api_keys SET suspended_until = ?, rejections = 0, rejections_since = NULL WHERE id = ?',
      ),
    }
    // Growth reads the account's newest state as admission does, under the same write lock.
    this.extendTx = db.transaction((q: Extension) => {
      const last = this.q.last.get(q.accountId)
      const at = last ? Math.max(q.now, last.created_at) : q.now
      return this.reserve.extend(q, at, last && last.m_start !== null ? last : null)
    }).immediate as never
    // A lone admission runs directly in its transaction: nothing else in it to protect.
    this.admitTx = db.transaction((input: AdmitInput) => this.admitLocked(input, null)).immediate as never
    // A batch first runs as one plain transaction: a savepoint per admission costs two statements
    // and a copy of every page the admission writes, for a failure that almost never happens.
    this.admitAllTx = db.transaction((inputs: AdmitInput[]) => {
      const batch = new Batch(inputs)
      const results = inputs.map((i) => this.admitLocked(i, batch))
      this.carryOver(batch)
      return results
    }).immediate as never
    // Inside the outer transaction a nested one is a SAVEPOINT: a failing admission undoes only its own writes.
    const nested = db.transaction((input: AdmitInput, batch: Batch) => this.admitLocked(input, batch))
    this.admitManyTx = db.transaction((inputs: AdmitInput[]) => {
      const batch = new Batch(inputs)
      const results = inputs.map((input): AdmitResult | Error => {
        try {
          return nested(input, batch)
        } catch (err) {
          return err instanceof Error ? err : new Error(String(err))
        }
      })
      this.carryOver(batch)
      return results
    }).immediate as never
  }

  admit(input: AdmitInput): AdmitResult {
    return this.admitTx(input)
  }

  /** `Limiter.extend`: the handle grows with its charge once the growth is committed. */
  extend(q: Extension): Extended {
    const e = this.extendTx(q)
    if (e.tokens || e.micros) grown(q.handle as object, e)
    return e
  }

  /**
   * One result per input, in order; an admission that failed gets its error instead. A batch of
   * one opens no savepoint: its failure (or a busy lock) is thrown, as `admit` would. A batch
   * runs as one transaction; should any admission in it fail, that transaction is rolled back
   * (nothing of it was committed) and the batch decided again with a savepoint per admission.
   */
  admitMany(inputs: AdmitInput[]): Array<AdmitResult | Error> {
    if (inputs.length === 1) return [this.admitTx(inputs[0]!)]
    try {
      return this.admitAllTx(inputs)
    } catch (err) {
      // The lock is taken: nothing ran, and the caller waits and retries the batch.
      if (isBusy(err)) throw err
      return this.admitManyTx(inputs)
    }
  }

  /**
   * Deletes up to `chunk` admissions without a charge older than `before` (the day window's start:
   * no window reads them), account by account along the primary key, each account's newest kept;
   * returns how many went.
   */
  prune(before: number, chunk: number): number {
    let left = chunk
    for (let a = this.q.accounts.get(-1); a && left > 0; a = this.q.accounts.get(a.account_id)) {
      left -= this.q.prune.run(a.account_id, before, left).changes
    }
    return chunk - left
  }

  windows(accountId: number, now: number, rpm: number | null, rpd: number | null) {
    const last = this.q.last.get(accountId)
    return {
      minute: this.window(accountId, last, now, this.spans.minuteMs, rpm),
      day: this.window(accountId, last, now, this.spans.dayMs, rpd),
    }
  }

  private window(
    accountId: number,
    last: Row | null,
    now: number,
    span: number,
    limit: number | null,
  ): WindowLimit {
    const first = last ? this.q.firstAfter.get(accountId, now - span) : null
    const used = first && last ? last.seq - first.seq + 1 : 0
    return windowOf(limit, used, first ? first.created_at : null, span)
  }

  /**
   * The account's state onto each row of the batch written without it whose account's later
   * admissions in the batch were all refused (or failed): the newest row holds the state again.
   */
  private carryOver(batch: Batch): void {
    for (const [accountId, w] of batch.written) {
      if (w.bare) this.q.carry.run(...stateValues(w.state!), accountId, w.created_at, w.seq)
    }
  }

  /**
   * When a full window admits again: once (used − limit + 1) requests have left it, the one with
   * sequence number last − limit + 1 being the last of those to leave. That is the window's first
   * row (whose departure is its resetAt) unless the limit was lowered below its use.
   */
  private retryAt(accountId: number, w: WindowLimit, span: number): number {
    const skip = w.used - w.limit!
    return skip === 0 ? w.resetAt! : this.q.nthFrom.get(accountId, w.resetAt! - span, skip)!.created_at + span
  }

  /** Runs inside the write transaction; `batch`: the rest of its transaction's admissions. */
  private admitLocked(input: AdmitInput, batch: Batch | null): AdmitResult {
    const { accountId, now, rpm, rpd } = input
    const { minuteMs, dayMs } = this.spans
    const later = batch ? batch.take(accountId) : 0
    // The account's newest row and the state it holds: as this transaction wrote it, else as stored.
    const written = batch?.written.get(accountId)
    const read = written ? null : this.q.last.get(accountId)
    const last: Row | null = written ?? read
    const stored = written ? written.state : read && read.m_start !== null ? read : null
    // An unlimited window is not measured on the hot path; windows() reports its use.
    const minute = rpm === null ? unlimited() : this.window(accountId, last, now, minuteMs, rpm)
    const day = rpd === null ? unlimited() : this.window(accountId, last, now, dayMs, rpd)
    const minuteFull = rpm !== null && minute.used >= rpm
    const dayFull = rpd !== null && day.used >= rpd
    if (minuteFull || dayFull) {
      // Until a request would be admitted (DESIGN §5): with both windows full, the later of the
      // two (a day filled within the last minute waits for the day, not for the minute).
      const m = minuteFull ? this.retryAt(accountId, minute, minuteMs) : Number.NEGATIVE_INFINITY
      const d = dayFull ? this.retryAt(accountId, day, dayMs) : Number.NEGATIVE_INFINITY
      const full = d > m ? 'day' : 'minute'
      const retryAt = Math.max(m, d)
      return {
        admitted: false,
        window: full,
        retryAt,
        minute,
        day,
        suspendedUntil: this.noteRejection(input),
      }
    }
    // created_at never goes backwards within an account (clock steps, several processes).
    const at = last ? Math.max(now, last.created_at) : now
    const seq = (last?.seq ?? 0) + 1
    const charged = input.charge ? this.reserve.reserve(input, at, seq, stored, !written) : null
    if (charged && 'refusal' in charged) {
      const r = charged.refusal
      return {
        admitted: false,
        window: r.state.row.window === 'minute' ? 'minute' : 'day',
        retryAt: r.retryAt ?? at,
        minute,
        day,
        suspendedUntil: this.noteRejection(input),
        charge: r,
      }
    }
    // The account's state: the new one, else the newest admission's carried forward.
    const state = charged ? (charged.state ?? stored) : stored
    // A later admission of the account in this transaction writes the state it carries on (or
    // carryOver does): every row but the account's newest at the commit goes without it.
    const bare = state !== null && later > 0
    const c = charged?.charge
    if (state && !bare) {
      // Every value an argument of its own: spreading the state's columns cost an array and a
      // spread call per admission (as `insertCharge` below).
      this.q.insertWide.run(
        accountId,
        at,
        seq,
        c ? c[0] : null,
        c ? c[1] : null,
        c ? c[2] : null,
        c ? c[3] : null,
        c ? c[4] : null,
        state.m_start,
        state.m_first,
        state.d_start,
        state.d_first,
        state.rm,
        state.rd,
        state.tm,
        state.td,
        state.pd_start,
        state.pd,
        state.pw_start,
        state.pw,
        state.pm_start,
        state.pm,
      )
    } else if (c) {
      // Its values one by one: a spread call cost ≈ 0.4 µs an admission end to end (profiled).
      this.q.insertCharge.run(accountId, at, seq, c[0], c[1], c[2], c[3], c[4])
    } else this.q.insert.run(accountId, at, seq)
    this.q.countRequest.run(accountId, minuteOf(at), input.model)
    batch?.written.set(accountId, { seq, created_at: at, state, bare })
    return {
      admitted: true,
      gatewayId: input.gatewayId,
      loggedAt: at,
      minute: consumed(minute, now, minuteMs),
      day: consumed(day, now, dayMs),
      ...(charged ? { reservation: charged.reservation } : {}),
    }
  }

  private noteRejection(input: AdmitInput): number | null {
    return input.suspension ? this.countRejection(input.keyId, input.now, input.suspension) : null
  }

  /** Adds one refusal to the key's count; returns the end of the suspension it started, or null. */
  countRejection(keyId: string, now: number, s: SuspensionPolicy): number | null {
    const cutoff = now - s.windowMs
    const row = this.q.reject.get(cutoff, cutoff, now, keyId)
    if (!row || row.rejections <= s.maxRejections) return null
    const until = now + s.durationMs
    this.q.suspend.run(until, keyId)
    return until
  }
}

/**
 * One transaction's admissions: how many of each account's are still to come, and each account's
 * newest row as written so far (the next admission of it reads that instead of the table), with
 * whether that row went without the account's state.
 */
class Batch {
  private readonly left = new Map<number, number>()
  readonly written = new Map<number, Row & { state: Stored | null; bare: boolean }>()
  constructor(inputs: AdmitInput[]) {
    for (const i of inputs) this.left.set(i.accountId, (this.left.get(i.accountId) ?? 0) + 1)
  }

  /** Counts one admission of the account off; returns how many more of it the batch holds. */
  take(accountId: number): number {
    const n = this.left.get(accountId)! - 1
    this.left.set(accountId, n)
    return n
  }
}

/** The usage counters' bucket: the UTC minute of a request's admission. */
export const minuteOf = (t: number): number => Math.floor(t / 60_000)
