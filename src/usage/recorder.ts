/**
 * @module
 * Writes request outcomes off the hot path, in batches: on SQLite each is the request's one log
 * row. The admission itself (the limiter's row and the usage counters) is written synchronously
 * by the limiter, so a crash (`kill -9`) loses the log rows, token counts and latencies of the
 * requests in flight and of the last `flushMs` — never the fact that a request was admitted:
 * limits and `/v1/usage` request counts still include it.
 */
import {
  type Completion,
  type RateLimitedEvent,
  type RefusalEvent,
  SettlementPendingError,
  type Store,
  StoreBusyError,
  StoreUnavailableError,
} from '../store/index.ts'
import type { Logger } from '../util/log.ts'

const MAX_BATCH = 500
/**
 * Outcomes, rate-limited events and refusal entries (each) kept for a retry while the store is
 * busy or full; beyond this the oldest are dropped (new refusal entries refused).
 */
const MAX_PENDING = 100_000
/**
 * How long (ms) one piece of a flush may hold the event loop. A store that writes synchronously
 * (SQLite) held it for the whole batch, and the request in flight when the 200 ms timer fired
 * waited for all of it (issue 46's lane: the flush in 10–30 % of the requests over p99, 0–1 % of
 * the rest, up to 3.8 ms at one request at a time). Outcomes are now written in pieces sized to
 * this from the last piece's pace; a store that writes over the network holds the loop for
 * microseconds, so its pieces grow to a whole batch. A store that writes on a thread of its own
 * (a serving SQLite store: src/store/sqlite/usage-writer.ts) holds the loop for microseconds too,
 * but the database's write lock for the whole transaction: its pieces are paced on that instead
 * (LOCK_PIECE_MS).
 */
const PIECE_MS = 0.5
/**
 * The pause between two pieces (ms). Back to back (a setImmediate between them) a request still
 * met most of the flush: it needs several turns of the loop (its body, the admission, the
 * upstream's headers and body, the answer), and each came after the next piece. Paused, a request
 * at a time meets one piece at most.
 */
const PIECE_GAP_MS = 2
/**
 * The fewest outcomes in a piece, and the most pieces a batch is cut into. A write has a fixed
 * cost (its transaction, the rollup rows, the commit: measured alone, 8 outcomes 110 µs and 64
 * outcomes 390 µs, so about 14 outcomes' worth), so small pieces spread a flush over many writes
 * and cost throughput: four at most keeps that to three more fixed costs a batch.
 * The cap overrides the pace on purpose whenever a batch holds more than four paced pieces: without
 * it (pieces at the pace alone, tried and measured 2026-11-29 at load 14–20) a c64 run of 32,000
 * requests wrote 979 pieces instead of 317 and held the loop 1,110 ms instead of 655 (14 µs more a
 * request), because under load a transaction's fixed cost nears PIECE_MS itself; at c=1 it cut
 * 3,000 requests' outcomes into 128 pieces instead of 59–77 — more requests met a piece, each a
 * little shorter (p50 0.47 against 0.60–0.86 ms) — which no lane could tell apart from the noise.
 */
const MIN_PIECE = 8
const MAX_PIECES = 4
/**
 * How long (ms) one piece written off the loop (`Store.usageWriteMs`: a serving SQLite store's
 * writer thread) may hold the database's write lock: an admission that meets it waits for the
 * rest. Paced on the loop's microseconds, a c64 batch became one transaction of up to 500 outcomes,
 * several ms of lock at load (eleven of twelve c64 pairs in the lane below main's req/s, 0.35–0.98 ×,
 * 2026-11-29); at c=1 a
 * batch (~60 outcomes, ~0.6 ms) stays one piece.
 */
const LOCK_PIECE_MS = 2
/**
 * Written off the loop, a batch is cut into `floor(outcomes / LOCK_MIN_PIECE)` pieces, at least one
 * and at most MAX_PIECES: under 200 outcomes it is one transaction, 300–399 three. Each piece is a
 * transaction of its own, and its fixed part (the commit's WAL frames, the counter and rollup rows, the pages read again after the
 * loop's commits) holds the lock as long as a few dozen outcomes do — on a loaded host, where the
 * pace (LOCK_PIECE_MS) shrinks the pieces, for longer than the outcomes themselves. An admission
 * meets the lock in proportion to the time it is held, so a c=1 batch (~60 outcomes) cut in four
 * made more admissions wait, not fewer (stop 62, docs/benchmarks/2026-11-29-tail.md: the busy
 * admissions per request about halved as one piece). A c64 batch (~500) is still four.
 */
const LOCK_MIN_PIECE = 100
/** At shutdown, the first pause between flushes the store did not take; doubled up to the last. */
const CLOSE_RETRY_MS = [50, 100, 200, 400, 800, 1_000]

export class UsageRecorder {
  private pending: Completion[] = []
  private rateLimited: RateLimitedEvent[] = []
  /** By key, code and hour: a flood of equal refusals is one entry with a count. */
  private refusals = new Map<string, RefusalEvent>()
  private timer: ReturnType<typeof setTimeout> | null = null
  /** The last flush asked for: the one running, or one waiting behind it. */
  private flushing: Promise<void> = Promise.resolve()
  /**
   * A flush waiting behind the running one. It takes what is pending when it starts, so it holds
   * everything recorded before it was asked for: every flush asked for meanwhile shares it.
   */
  private waiting: Promise<void> | null = null
  /**
   * Per account, the settlements recorded and not yet in the store (pending, or in a flush still
   * running): until they are, the limiter still counts those requests at their whole reservation.
   */
  private unsettled = new Map<number, number>()
  /** Outcomes in the next piece of a flush (see PIECE_MS): adapted to the store's speed. */
  private piece = MIN_PIECE
  /** Shut down (`close`): no flush on a timer any more, the store is about to close. */
  private closed = false
  /**
   * Told of each batch of outcomes once it is in the store (the alerts' threshold check); never
   * awaited by a flush.
   */
  onWritten: ((batch: Completion[]) => void) | null = null

  constructor(
    private readonly store: Store,
    private readonly flushMs: number,
    private readonly log: Logger,
  ) {}

  record(c: Completion): void {
    this.pending.push(c)
    if (c.settlement) this.count(c.settlement.accountId, 1)
    if (this.pending.length >= MAX_BATCH) void this.flush()
    else this.later()
  }

  /** A request refused for a rate limit, counted in the usage rollups with the next batch. */
  recordRateLimited(e: RateLimitedEvent): void {
    // Bounded like outcomes: a flood of refusals while the store is down must not grow memory.
    if (this.rateLimited.length >= MAX_PENDING) return
    this.rateLimited.push(e)
    if (this.rateLimited.length >= MAX_BATCH) void this.flush()
    else this.later()
  }

  /** A refusal before admission (its key known), counted per key, code and hour with the next batch. */
  recordRefusal(e: Omit<RefusalEvent, 'count'>): void {
    if (this.addRefusal({ ...e, at: e.at - (e.at % 3_600_000), count: 1 })) this.later()
  }

  /**
   * Whether this account has settlements recorded here that the store does not hold yet. A charge
   * refused while it has is worth one more try after `flush()`: the refusal may have come from the
   * reservations of requests that already ended, at far more than they cost. Refusals waiting on a
   * flush while one runs share the one waiting behind it: a flood of them costs one write at a
   * time, not one each, and each waits for a write that holds what ended before it.
   */
  settling(accountId: number): boolean {
    return this.unsettled.has(accountId)
  }

  /**
   * Writes everything recorded before this call; resolves when it is in the store, or put back for
   * the next flush when the store was busy or unavailable (or lost, for a failure no retry fixes).
   * While a flush runs, the next one waits behind it and takes its batch when it starts: it holds
   * what the running one put back, and what was recorded while it ran.
   */
  flush(): Promise<void> {
    if (this.waiting) return this.waiting
    const start = () => {
      this.waiting = null
      return this.write()
    }
    // `write` settles every failure itself; were one to escape, later flushes must still run.
    const next = this.flushing.then(start, start)
    this.waiting = next
    this.flushing = next
    return next
  }

  /**
   * The last flush, before the store closes: retried while the store is busy or unavailable, until
   * nothing is pending or `windowMs` has passed since the call (a write under way then is not cut:
   * it ends within the store's own bound, `database.busy_timeout_ms`, + 1 s on PostgreSQL). What
   * is still pending then is lost — its settlements left to the sweeper, which charges each
   * reservation in full — and said so in one `error` line. No timer flush after it.
   * @example
   * await recorder.close(config.server.drainTimeoutS * 1000)
   */
  async close(windowMs: number): Promise<void> {
    this.closed = true
    const deadline = performance.now() + windowMs
    for (let i = 0; ; i = Math.min(i + 1, CLOSE_RETRY_MS.length - 1)) {
      await this.flush()
      if (this.timer) clearTimeout(this.timer)
      this.timer = null
      if (!this.holding()) return
      const left = deadline - performance.now()
      if (left <= 0) break
      await Bun.sleep(Math.min(CLOSE_RETRY_MS[i]!, left))
    }
    const refused = [...this.refusals.values()]
    this.log.error('usage lost at shutdown', {
      outcomes: this.pending.length,
      settlements: this.pending.filter((c) => c.settlement).length,
      accounts: [...this.unsettled.keys()].slice(0, 100),
      rate_limited: this.rateLimited.length,
      refusals: refused.reduce((n, e) => n + e.count, 0),
      window_ms: windowMs,
      effect:
        'these outcomes (status, tokens, latency) are not in the request log; their reservations are settled in full by the sweep after limits.reservation_ttl_s',
    })
  }

  /** Something recorded is not in the store yet. */
  private holding(): boolean {
    return this.pending.length > 0 || this.rateLimited.length > 0 || this.refusals.size > 0
  }

  private later(): void {
    if (this.closed) return
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs)
  }

  private count(accountId: number, n: number): void {
    const left = (this.unsettled.get(accountId) ?? 0) + n
    if (left > 0) this.unsettled.set(accountId, left)
    else this.unsettled.delete(accountId)
  }

  /** The batch's settlements are in the store, or lost with it: no longer waiting. */
  private settled(batch: Completion[]): void {
    for (const c of batch) if (c.settlement) this.count(c.settlement.accountId, -1)
  }

  /** Adds to the entry of its key, code and hour; false when a new entry would pass the bound. */
  private addRefusal(e: RefusalEvent): boolean {
    const id = `${e.keyId}\0${e.code}\0${e.at}`
    const seen = this.refusals.get(id)
    if (seen) {
      seen.count += e.count
      return true
    }
    if (this.refusals.size >= MAX_PENDING) return false
    this.refusals.set(id, { ...e })
    return true
  }

  /** Puts back, oldest first, what a flush could not write; beyond the bound the oldest go. */
  private requeue(batch: Completion[], limited: RateLimitedEvent[], refused: RefusalEvent[]): void {
    this.pending = batch.concat(this.pending)
    const over = this.pending.length - MAX_PENDING
    if (over > 0) {
      this.settled(this.pending.slice(0, over))
      this.pending.splice(0, over)
      this.log.error('usage outcomes dropped', { rows: over })
    }
    this.rateLimited = limited.concat(this.rateLimited)
    const overLimited = this.rateLimited.length - MAX_PENDING
    if (overLimited > 0) {
      this.rateLimited.splice(0, overLimited)
      this.log.error('rate-limited counts dropped', { rows: overLimited })
    }
    // Counts of the same key, code and hour recorded meanwhile are added up: bounded by entries.
    const lost = refused.filter((e) => !this.addRefusal(e)).length
    if (lost) this.log.error('refusal counts dropped', { rows: lost })
    this.later()
  }

  /**
   * One flush: the outcomes, then the rate-limited counts, then the refusal counts, each its own
   * write. A part written is never written again (its counters would count it twice); a part the
   * store was busy or unavailable for is put back with the parts after it (not tried: they would
   * wait out the same lock); outcomes whose settlements a limiter outside the database did not
   * take are put back too (written again, they count once), and the next parts still tried; a
   * part that failed otherwise is lost, and the next parts still tried.
   */
  private async write(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    const batch = this.pending
    const limited = this.rateLimited
    const refused = [...this.refusals.values()]
    this.pending = []
    this.rateLimited = []
    this.refusals = new Map()
    const { outcomes, left } = await this.writeOutcomes(batch)
    const counts =
      outcomes === 'retry'
        ? 'retry'
        : await this.attempt(limited.length, () => this.store.recordRateLimited(limited))
    const refusals =
      counts === 'retry'
        ? 'retry'
        : await this.attempt(refused.length, () => this.store.recordRefusals(refused))
    const again = outcomes === 'retry' || outcomes === 'settling'
    if (again || refusals === 'retry')
      this.requeue(again ? left : [], counts === 'retry' ? limited : [], refusals === 'retry' ? refused : [])
  }

  /**
   * The outcomes in pieces, each its own write, the event loop let go between them for
   * PIECE_GAP_MS (PIECE_MS).
   * A piece written or lost is done with; at a piece the store did not take (`retry`,
   * `settling`) the flush stops and that piece and the rest are `left` for the next one.
   */
  private async writeOutcomes(
    batch: Completion[],
  ): Promise<{ outcomes: 'written' | 'retry' | 'settling' | 'lost'; left: Completion[] }> {
    let lost = false
    // Off the loop (the last write reported its lock time): at most a piece a LOCK_MIN_PIECE.
    const pieces =
      this.store.usageWriteMs?.() == null
        ? MAX_PIECES
        : Math.max(1, Math.min(MAX_PIECES, Math.floor(batch.length / LOCK_MIN_PIECE)))
    for (let i = 0; i < batch.length; ) {
      const size = Math.max(this.piece, Math.ceil(batch.length / pieces))
      const piece = i === 0 && size >= batch.length ? batch : batch.slice(i, i + size)
      let heldMs = 0
      const r = await this.attempt(piece.length, () => {
        const t0 = performance.now()
        // The synchronous part of the write runs inside this call: on SQLite without its writer
        // thread (a store not serving, or before the thread runs), the whole write.
        const p = this.store.complete(piece)
        heldMs = performance.now() - t0
        return p
      })
      if (r === 'retry' || r === 'settling') return { outcomes: r, left: batch.slice(i) }
      this.settled(piece)
      if (r === 'written') this.onWritten?.(piece)
      else lost = true
      // Next piece: as many as fit in PIECE_MS at this one's pace (LOCK_PIECE_MS of the lock, for
      // a write off the loop), within [MIN_PIECE, MAX_BATCH].
      if (r === 'written') {
        const locked = this.store.usageWriteMs?.() ?? null
        const fit =
          locked === null
            ? Math.floor((piece.length * PIECE_MS) / Math.max(heldMs, 1e-3))
            : Math.floor((piece.length * LOCK_PIECE_MS) / Math.max(locked, 1e-3))
        this.piece = Math.max(MIN_PIECE, Math.min(MAX_BATCH, fit))
      }
      i += piece.length
      if (i < batch.length) await Bun.sleep(PIECE_GAP_MS)
    }
    return { outcomes: lost ? 'lost' : 'written', left: [] }
  }

  /**
   * `retry`: the store did not take the write (busy, unavailable); `settling`: it did, but a
   * limiter outside the database did not take the settlements; `lost`: a failure no retry fixes.
   */
  private async attempt(
    rows: number,
    write: () => Promise<void>,
  ): Promise<'written' | 'retry' | 'settling' | 'lost'> {
    if (!rows) return 'written'
    try {
      await write()
      return 'written'
    } catch (err) {
      const tried =
        err instanceof StoreBusyError || err instanceof StoreUnavailableError
          ? 'retry'
          : err instanceof SettlementPendingError
            ? 'settling'
            : 'lost'
      this.log.error('usage flush failed', {
        error: (err as Error).message,
        rows,
        retrying: tried !== 'lost',
      })
      return tried
    }
  }
}
