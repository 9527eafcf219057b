/**
 * @module
 * An upstream body bounded by the call's idle and total timeouts, read as a stream: a whole answer
 * read through the output gate (pipeline/gated-read.ts). The stream writer keeps these deadlines
 * itself, on one timer, for the streams it writes.
 *
 * @example
 * const reader = guardStream(res.body!, ctx).getReader()
 */
import type { UnderlyingSource } from 'bun'
import { GatewayError } from '../util/errors.ts'
import { abortError, idleTimeout, totalLeft, totalTimeout } from './http.ts'
import type { CallContext } from './types.ts'
import { describeNetworkError, networkErrorDetail, streamInterrupted } from './upstream-errors.ts'

/**
 * Bounds a stream by `ctx.timeouts`: at most `idleMs` waiting for each item, at most `totalMs`
 * from the attempt's start (`totalLeft`; the header phase is bounded by `upstreamFetch`). A timeout errors the
 * result with 504 `upstream_timeout`; a source that fails with anything but a `GatewayError` →
 * 502 `upstream_stream_interrupted`. Cancelling the result cancels the source. Wrap the raw
 * body, so that upstream keep-alive comments count as activity.
 *
 * @example
 * const reader = guardStream(res.body!, ctx).getReader()
 */
export function guardStream<T>(s: ReadableStream<T>, ctx: CallContext): ReadableStream<T> {
  return new ReadableStream<T>(new GuardedSource<T>(s, ctx), { highWaterMark: 0 })
}

/**
 * One timer per stream, re-armed at most about once per `idleMs` rather than once per item,
 * because this sits on every streamed byte chunk.
 */
class GuardedSource<T> implements UnderlyingSource<T> {
  private controller: ReadableStreamDefaultController<T> | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  /** `performance.now()` when the pending read began; -1 while nobody is reading. */
  private waitingSince = -1
  private readonly deadline: number
  private done = false
  private readonly onTimer = (): void => this.check()

  private readonly reader

  constructor(
    source: ReadableStream<T>,
    private readonly ctx: CallContext,
  ) {
    this.reader = source.getReader()
    this.deadline = performance.now() + totalLeft(ctx)
  }

  start(controller: ReadableStreamDefaultController<T>): void {
    this.controller = controller
    this.arm(performance.now())
  }

  async pull(controller: ReadableStreamDefaultController<T>): Promise<void> {
    this.waitingSince = performance.now()
    let r: Awaited<ReturnType<typeof this.reader.read>>
    try {
      r = await this.reader.read()
    } catch (err) {
      this.waitingSince = -1
      return this.fail(this.translate(err))
    }
    this.waitingSince = -1
    if (this.done) return // a timeout fired while the read was pending
    if (r.done) {
      this.stop()
      controller.close()
    } else {
      controller.enqueue(r.value)
    }
  }

  cancel(reason: unknown): Promise<void> {
    this.stop()
    return this.reader.cancel(reason)
  }

  private check(): void {
    this.timer = undefined
    if (this.done) return
    const { idleMs } = this.ctx.timeouts
    const now = performance.now()
    if (now >= this.deadline) this.fail(totalTimeout(this.ctx))
    else if (this.waitingSince >= 0 && now - this.waitingSince >= idleMs) this.fail(idleTimeout(this.ctx))
    else this.arm(now)
  }

  private arm(now: number): void {
    const idleAt = (this.waitingSince >= 0 ? this.waitingSince : now) + this.ctx.timeouts.idleMs
    this.timer = setTimeout(this.onTimer, Math.max(0, Math.min(this.deadline, idleAt) - now))
  }

  private translate(err: unknown): GatewayError {
    return streamReadError(err, this.ctx)
  }

  private fail(err: GatewayError): void {
    if (this.done) return
    this.stop()
    this.controller?.error(err)
    this.reader.cancel(err).catch(() => {})
  }

  private stop(): void {
    this.done = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }
}

/** A failed read of an upstream body, as the client should hear of it. */
export function streamReadError(err: unknown, ctx: CallContext): GatewayError {
  if (err instanceof GatewayError) return err
  if (ctx.signal.aborted) return abortError(ctx.signal.reason)
  return streamInterrupted(
    ctx.provider.prefix,
    describeNetworkError(err),
    networkErrorDetail(err, ctx.provider.api_key),
  )
}
