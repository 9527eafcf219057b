/**
 * @module
 * The reading half of the stream writer (writer.ts extends it): the source, a stream of items or a
 * `StreamPlan` whose body is read and run through its stages in the same turn (`SyncStages`), one
 * read at a time into `items`. A continuation's source replaces the first one here (`readFrom`).
 */
import { idleTimeout, streamReadError, totalTimeout } from '../../providers/http.ts'
import { isStreamPlan, type StreamPlan, SyncStages } from '../../providers/stream-plan.ts'
import type { GatewayError } from '../../util/errors.ts'
import type { Scheduler } from '../../util/scheduler.ts'
import type { StreamSource } from './types.ts'

/** What `getReader()` returns; named through a function because the DOM and Node typings differ. */
const readerOf = <T>(s: ReadableStream<T>) => s.getReader()
type Reader<T> = ReturnType<typeof readerOf<T>>

export abstract class SourceReader<T> {
  protected reader!: Reader<unknown>
  /** For a plan: its transformers, driven in the same pull as the read. */
  protected stages: SyncStages<T> | null = null
  protected plan: StreamPlan<T> | null = null
  /** Items made from the last read, not yet encoded. */
  protected readonly items: T[] = []
  /** The source has ended (and the stages are flushed). */
  protected sourceDone = false
  /** A stage failed after making items: thrown by the next read, once those are written. */
  protected failed: unknown = undefined
  /** The plan's idle or total timeout fired. */
  protected timedOut: GatewayError | null = null
  /** `now()` when the pending upstream read began (plans only); -1 while nobody is reading. */
  protected readSince = -1
  /** The outcome is recorded: nothing more is read. */
  protected finished = false
  /** When the source's total timeout fires (a plan's, or the writer's `total` for a chunk stream). */
  protected totalAt = Number.POSITIVE_INFINITY
  protected abstract readonly sched: Scheduler

  /** Reads `source` from now on: the first one, or a continuation's in place of a failed one. */
  protected readFrom(source: StreamSource<T>): void {
    this.items.length = 0
    this.failed = undefined
    this.timedOut = null
    this.sourceDone = false
    this.readSince = -1
    if (isStreamPlan(source)) {
      this.plan = source
      this.reader = readerOf(source.body)
      this.stages = new SyncStages<T>(source.stages, (item) => this.items.push(item))
    } else {
      this.plan = null
      this.stages = null
      this.reader = readerOf(source as ReadableStream<unknown>)
    }
  }

  /**
   * The source's own deadline passed at `now`, as its error: the total one, or after `content` a
   * plan's idle one (a read pending that long); null while none has.
   */
  protected sourceOverdue(
    now: number,
    content: boolean,
    total: { error: () => GatewayError } | undefined,
  ): GatewayError | null {
    const ctx = this.plan?.ctx
    if (now >= this.totalAt) return ctx ? totalTimeout(ctx) : total!.error()
    if (ctx && content && this.readSince >= 0 && now - this.readSince >= ctx.timeouts.idleMs)
      return idleTimeout(ctx)
    return null
  }

  /** When the source's own next deadline falls, as `sourceOverdue` judges them. */
  protected sourceDeadline(now: number, content: boolean): number {
    const ctx = this.plan?.ctx
    // A read that starts later has its idle deadline later still: checked when this one fires.
    if (!ctx || !content) return this.totalAt
    return Math.min(this.totalAt, (this.readSince >= 0 ? this.readSince : now) + ctx.timeouts.idleMs)
  }

  /** One read of the source, run through the stages into `items`. */
  protected async readOnce(): Promise<void> {
    if (this.timedOut) throw this.timedOut
    if (this.failed !== undefined) throw this.failed
    const plan = this.plan
    if (plan) this.readSince = this.sched.now()
    let r: Awaited<ReturnType<Reader<unknown>['read']>>
    try {
      r = await this.reader.read()
    } catch (err) {
      this.readSince = -1
      throw this.timedOut ?? (plan ? streamReadError(err, plan.ctx) : err)
    }
    this.readSince = -1
    if (this.finished) return
    if (this.timedOut) throw this.timedOut
    if (!this.stages) {
      if (r.done) this.sourceDone = true
      else this.items.push(r.value as T)
      return
    }
    try {
      if (r.done) {
        this.sourceDone = true
        this.stages.flush()
      } else this.stages.push(r.value)
    } catch (err) {
      // The items before the failure go out first, as they would have through a pipe.
      if (this.items.length === 0) throw err
      this.failed = err
    }
  }
}
