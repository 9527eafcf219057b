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
  type Store,
  StoreBusyError,
  StoreUnavailableError,
} from '../store/index.ts'
import type { Logger } from '../util/log.ts'

const MAX_BATCH = 500
/** Outcomes kept for a retry while the store is busy or full; beyond this the oldest are dropped. */
const MAX_PENDING = 100_000

export class UsageRecorder {
  private pending: Completion[] = []
  private rateLimited: RateLimitedEvent[] = []
  private timer: ReturnType<typeof setTimeout> | null = null
  private flushing: Promise<void> = Promise.resolve()

  constructor(
    private readonly store: Store,
    private readonly flushMs: number,
    private readonly log: Logger,
  ) {}

  record(c: Completion): void {
    this.pending.push(c)
    if (this.pending.length >= MAX_BATCH) void this.flush()
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs)
  }

  /** A request refused for a rate limit, counted in the usage rollups with the next batch. */
  recordRateLimited(e: RateLimitedEvent): void {
    // Bounded like outcomes: a flood of refusals while the store is down must not grow memory.
    if (this.rateLimited.length >= MAX_PENDING) return
    this.rateLimited.push(e)
    if (this.rateLimited.length >= MAX_BATCH) void this.flush()
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs)
  }

  private requeue(batch: Completion[]): void {
    this.pending = batch.concat(this.pending)
    const over = this.pending.length - MAX_PENDING
    if (over > 0) {
      this.pending.splice(0, over)
      this.log.error('usage outcomes dropped', { rows: over })
    }
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs)
  }

  /** Writes everything pending; resolves when it is in the store. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    const batch = this.pending
    const limited = this.rateLimited
    this.pending = []
    this.rateLimited = []
    this.flushing = this.flushing.then(async () => {
      try {
        if (batch.length) await this.store.complete(batch)
        if (limited.length) await this.store.recordRateLimited(limited)
      } catch (err) {
        const retry = err instanceof StoreBusyError || err instanceof StoreUnavailableError
        this.log.error('usage flush failed', {
          error: (err as Error).message,
          rows: batch.length,
          retrying: retry,
        })
        // The admissions are already stored; keep their outcomes for the next flush.
        if (retry) this.requeue(batch)
      }
    })
    return this.flushing
  }
}
