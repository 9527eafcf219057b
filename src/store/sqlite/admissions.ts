/**
 * @module
 * The limiter part on SQLite. Admissions are group-committed: those requested in the same
 * event-loop turn share one write transaction, because the commit (not the insert) is most of an
 * admission's cost. Each caller's promise still resolves only after its admission is committed.
 */
import type { Database } from 'bun:sqlite'
import type { LimitRow } from '../../limits/rows.ts'
import { DEFAULT_SPANS, type Extension, type WindowSpans } from '../../limits/types.ts'
import { StoreBusyError } from '../errors.ts'
import type { AdmitInput, AdmitResult, Limiter, Refusal } from '../types.ts'
import { ChargeQueries } from './charges.ts'
import { isBusy } from './errors.ts'
import type { SqliteGuard } from './guard.ts'
import { LimiterQueries } from './limiter.ts'

interface PendingAdmit {
  input: AdmitInput
  /** performance.now() after which this admission stops waiting for the lock. */
  deadline: number
  resolve: (r: AdmitResult) => void
  reject: (err: unknown) => void
}

export class SqliteLimiter implements Omit<Limiter, 'close'> {
  /** The synchronous queries, for the usage part's settling and retention (in their transactions). */
  readonly queries: LimiterQueries
  private readonly charges: ChargeQueries
  private readonly sweepTx: (before: number) => number
  private pending: PendingAdmit[] = []
  /** A flush is queued (next turn, or a retry while the lock is taken). */
  private queued = false
  private delay = 0
  /** The retry's timer while the lock is taken (null: none waiting). */
  private timer: ReturnType<typeof setTimeout> | null = null

  constructor(
    db: Database,
    private readonly guard: SqliteGuard,
    windows?: WindowSpans,
  ) {
    this.queries = new LimiterQueries(db, windows)
    this.charges = new ChargeQueries(db, windows ?? DEFAULT_SPANS)
    this.sweepTx = db.transaction((before: number) => this.queries.reserve.sweep(before, 1000))
      .immediate as never
  }

  admit(input: AdmitInput): Promise<AdmitResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ input, deadline: performance.now() + this.guard.waitMs, resolve, reject })
      if (!this.queued) {
        this.queued = true
        setImmediate(this.flush)
      }
    })
  }

  /**
   * Decides every pending admission in one write transaction. While another connection holds
   * the lock, the batch (and whatever joins it) waits on a timer with backoff; each admission
   * gives up at its own deadline with StoreBusyError.
   */
  readonly flush = (): void => {
    this.queued = false
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    const batch = this.pending
    if (!batch.length) return
    this.pending = []
    let results: Array<AdmitResult | Error>
    try {
      this.guard.assertFile()
      results = this.queries.admitMany(batch.map((p) => p.input))
      this.delay = 0
    } catch (err) {
      if (isBusy(err)) {
        this.retry(batch)
        return
      }
      const e = this.guard.classify(err)
      for (const p of batch) p.reject(e)
      return
    }
    this.guard.wrote()
    batch.forEach((p, i) => {
      const r = results[i]!
      if (r instanceof Error) p.reject(this.guard.classify(r))
      else p.resolve(r)
    })
  }

  private retry(batch: PendingAdmit[]): void {
    const now = performance.now()
    const waiting = batch.filter((p) => {
      if (p.deadline > now) return true
      p.reject(new StoreBusyError(this.guard.waitMs))
      return false
    })
    // Arrival order is decision order: the ones that waited go first.
    this.pending = waiting.concat(this.pending)
    if (!this.pending.length) return
    this.delay = Math.min(Math.max(1, this.delay * 2), 20)
    this.queued = true
    this.timer = setTimeout(this.flush, this.delay)
  }

  /**
   * This process's usage writer thread has committed (usage-writer.ts): a batch waiting on a timer
   * for the lock tries now rather than at its timer, at least 1 ms away — the thread's
   * transaction, the likeliest holder, is over. Another holder still leaves it BUSY: retried on
   * the timer as before.
   */
  readonly lockFreed = (): void => {
    if (this.timer) this.flush()
  }

  countRejection(r: Refusal) {
    return this.guard.write(() => this.queries.countRejection(r.keyId, r.now, r.suspension))
  }
  extend(q: Extension) {
    return this.guard.write(() => this.queries.extend(q))
  }
  windows(accountId: number, now: number, rpm: number | null, rpd: number | null) {
    return this.guard.read(() => this.queries.windows(accountId, now, rpm, rpd))
  }
  rowStates(q: { accountId: number; keyId: string | null; now: number; rows: LimitRow[] }) {
    return this.guard.read(() => this.charges.rowStates(q.accountId, q.keyId, q.now, q.rows))
  }
  sweepReservations(before: number) {
    return this.guard.write(() => this.sweepTx(before))
  }
}
