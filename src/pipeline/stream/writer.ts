/**
 * @module
 * The stream writer every surface shares. It holds the HTTP status until the source's first item
 * (so an upstream refusal is still a real HTTP error), then writes each item through the
 * surface's `StreamEncoder`, the encoder's keep-alive while the upstream is quiet, the encoder's
 * ending, or its error frame if the upstream fails after the first byte. It is pull-based: an
 * item is read from the source only when the client has taken the previous one, and a client
 * that leaves cancels the source (and so the upstream request).
 *
 * The source is either a stream of items or a `StreamPlan` (the upstream's raw body and the
 * transformers to run it through): a plan is driven in one stage — read a body chunk, run the
 * transformers and the encoder synchronously, enqueue — with the plan's idle / total timeouts,
 * the hold and the keep-alive on one timer, from an injectable scheduler. Reading the source is
 * source.ts's; what is done with a read's items, items.ts's; how the stream ends, ending.ts's.
 *
 * @example
 * const out = await writeStream(await adapter.stream(req, ctx), new ChatChunkEncoder(id, false), {
 *   keepaliveMs: 15_000, holdMs: 10_000, signal: request.signal, onFinish: (r) => record(r),
 * })
 * if (out.status === 'error') throw out.error
 * return new Response(out.body, { headers: { 'content-type': 'text/event-stream' } })
 */
import type { UnderlyingSource } from 'bun'
import { isStreamPlan } from '../../providers/stream-plan.ts'
import type { GatewayError } from '../../util/errors.ts'
import { realScheduler, type Scheduler, type Timer } from '../../util/scheduler.ts'
import type { StreamEncoder } from './encoder.ts'
import { type Controller, StreamEnding } from './ending.ts'
import { clientClosed, firstTokenTimeout } from './failures.ts'
import { encodeItems, gateRead } from './items.ts'
import type { StreamSource, WriteStreamOptions, WriteStreamResult } from './types.ts'

export function writeStream<T>(
  source: StreamSource<T>,
  encoder: StreamEncoder<T>,
  opts: WriteStreamOptions<T>,
): Promise<WriteStreamResult> {
  return new StreamWriter(source, encoder, opts).open()
}

export class StreamWriter<T> extends StreamEnding<T> implements UnderlyingSource<Uint8Array> {
  protected readonly sched: Scheduler
  protected readonly timer: Timer
  private readonly t0: number
  /** The first fill; awaited by the first pull when the hold ran out before it ended (else null by then). */
  private first: Promise<void> | null = null
  /** Where the time to first token counts from (`startedAt`, else `t0`). */
  private readonly ttftFrom: number
  /** A pull is waiting for the source: only then is the client owed a keep-alive. */
  private waiting = false
  private lastWrite = 0
  /** While the status is held: ends the hold (true = the hold ran out). */
  private release: ((held: boolean) => void) | null = null
  private readonly holdAt: number
  /** The gate refused an item: its ending is in `items`; once written, the stream ends. */
  private gateShut = false
  private readonly onGateShut = (): void => {
    this.gateShut = true
  }
  protected readonly onAbort = (): void => void this.abort()
  protected readonly onStop = (): void => void this.cut()
  /** `continueWith` was asked (it is asked once). */
  private continued = false
  /** Bytes encoded while the status is held for content; `open` writes them out (held or not). */
  private pending: Uint8Array[] = []
  /** Where bytes encoded before content go: held, or (once the hold ran out and a 200 went) out. */
  private readonly holdSink = (bytes: Uint8Array): void => {
    if (this.committed) this.write(bytes)
    else this.pending.push(bytes)
  }
  /** The hold ran out before the source had its say: the status went out. */
  private committed = false
  /** Content has been encoded (always true without `holdForContent`). */
  private content: boolean
  /** When the first token is overdue (epoch of the scheduler); infinite when it is waited for. */
  private readonly firstTokenAt: number

  constructor(source: StreamSource<T>, encoder: StreamEncoder<T>, opts: WriteStreamOptions<T>) {
    super(encoder, opts)
    const deadline = opts.scheduler || !isStreamPlan(source) ? undefined : source.ctx.deadline
    this.sched = opts.scheduler ?? deadline?.scheduler ?? realScheduler
    // The request's timer, if it has one (it timed the first byte): taken over, not a second one.
    this.timer = deadline ? deadline.own(() => this.tick()) : this.sched.timer(() => this.tick())
    this.t0 = this.sched.now()
    this.ttftFrom = opts.startedAt ?? this.t0
    this.content = !opts.holdForContent
    const ft = opts.holdForContent ? opts.firstToken : undefined
    this.firstTokenAt = ft?.failOver ? this.t0 + ft.ms : Number.POSITIVE_INFINITY
    // While a fallback may still take over, the status is held past the first-token deadline.
    this.holdAt = this.t0 + opts.holdMs + (ft?.failOver ? ft.ms : 0)
    this.readFrom(source)
    // total_ms counts from the attempt's start (its deadline's), the wait for headers included.
    if (this.plan) this.totalAt = (deadline?.startedAt ?? this.t0) + this.plan.ctx.timeouts.totalMs
    else this.totalAt = opts.total ? this.t0 + opts.total.ms : Number.POSITIVE_INFINITY
  }

  async open(): Promise<WriteStreamResult> {
    const { signal, stop } = this.opts
    if (signal?.aborted) {
      await this.abort()
      return { status: 'error', error: clientClosed() }
    }
    signal?.addEventListener('abort', this.onAbort, { once: true })
    if (stop?.aborted) {
      await this.cut()
      return { status: 'error', error: this.cutError! }
    }
    stop?.addEventListener('abort', this.onStop, { once: true })
    const first = this.fill()
    this.first = first
    let failure: { err: unknown } | undefined
    const held = await new Promise<boolean>((resolve) => {
      this.release = resolve
      first.then(
        () => resolve(false),
        (err: unknown) => {
          failure = { err }
          resolve(false)
        },
      )
      this.arm(this.t0)
    })
    this.release = null
    // An abort during the hold cancels the reader, which settles `first`: check it before anything else.
    if (this.finished) return { status: 'error', error: this.cutError ?? clientClosed() }
    if (failure !== undefined) {
      const error = this.sourceFailure(failure.err)
      this.finish(error, false, error)
      return { status: 'error', error }
    }
    const body = new ReadableStream<Uint8Array>(this, { highWaterMark: 0 })
    if (held) {
      // Past the hold with nothing to say yet: what is held (or a comment) makes the server send the 200 now.
      this.committed = true
      if (this.pending.length > 0) {
        for (const bytes of this.pending) this.write(bytes)
        this.pending = []
      } else this.write(this.encoder.keepalive)
    } else {
      // The first fill is done: what it held is queued before the server has the body, so the
      // status, the headers and these bytes leave in one socket write (left to the first pull,
      // the headers went out alone first: a write and a wake-up of the client more a stream).
      this.first = null
      for (const bytes of this.pending) this.write(bytes)
      this.pending = []
    }
    this.arm(this.sched.now())
    return { status: 'ok', body }
  }

  start(controller: Controller): void {
    this.controller = controller
    this.lastWrite = this.sched.now()
  }

  async pull(controller: Controller): Promise<void> {
    try {
      for (;;) {
        if (this.first !== null) {
          const first = this.first
          this.first = null
          this.waiting = true
          await first
          this.waiting = false
        }
        if (this.finished) return // cancelled while the read was pending
        // Cut at the output allowance and its ending written: the upstream is let go now.
        if (this.gateShut && this.items.length === 0) return this.end(controller)
        // The upstream failed in-band and its error frame went out: nothing more will be relayed,
        // so the upstream is let go now rather than read to its end.
        if (this.items.length === 0 && !this.sourceDone && this.encoder.failure?.())
          return this.end(controller)
        const gating = gateRead(this.opts.gate, this.items, this.gateShut, this.onGateShut)
        if (gating) await gating
        const emitted = this.items.length > 0 && this.emit((bytes) => controller.enqueue(bytes))
        // Cut: its ending written, the upstream is let go now, not at the client's next read.
        if (this.gateShut) return this.end(controller)
        if (emitted) return
        if (this.sourceDone && this.failed === undefined) return this.end(controller)
        this.waiting = true
        await this.readOnce()
        this.waiting = false
      }
    } catch (err) {
      // Also a malformed chunk from an adapter or a refused event: the stream must still end properly.
      this.waiting = false
      if (await this.continueAfter(err)) return this.pull(controller)
      return this.failAfterStart(controller, err)
    }
  }

  /** After content: asks `continueWith` once for a source to go on with, and switches to it. */
  private async continueAfter(err: unknown): Promise<boolean> {
    const ask = this.opts.continueWith
    if (!ask || this.continued || !this.content || this.finished) return false
    this.continued = true
    // The old source is let go at once: nothing more of it will be relayed.
    this.reader.cancel(err).catch(() => {})
    this.waiting = true // keep-alives while the next target answers
    let next: StreamSource<T> | null = null
    try {
      next = await ask(this.sourceFailure(err))
    } catch {}
    this.waiting = false
    if (next === null || this.finished) return false
    this.readFrom(next)
    const now = this.sched.now()
    this.totalAt = this.plan ? now + this.plan.ctx.timeouts.totalMs : Number.POSITIVE_INFINITY
    this.arm(now)
    return true
  }

  cancel(reason: unknown): Promise<void> {
    return this.abort(reason)
  }

  /**
   * Reads until there is something to encode or the source ends; holding for content, encodes
   * into `pending` until content, an in-band failure (thrown: nothing was sent) or the end.
   */
  private async fill(): Promise<void> {
    if (this.content) {
      do await this.readOnce()
      while (this.items.length === 0 && !this.sourceDone && !this.finished)
      return
    }
    for (;;) {
      await this.readOnce()
      if (this.finished) return
      if (this.items.length > 0) {
        const gating = gateRead(this.opts.gate, this.items, this.gateShut, this.onGateShut)
        if (gating) await gating
        this.emit(this.holdSink)
      }
      // Cut at the allowance before any content: what was held is the whole answer.
      if (this.gateShut) {
        this.content = true
        this.ttftMs = this.sched.now() - this.ttftFrom
        return
      }
      // Content first: an in-band failure that came in the same read as content goes out after it.
      if (this.encoder.contentStarted?.() ?? (this.encoder.relayedBytes?.() ?? 1) > 0) {
        this.content = true
        // The first content-bearing item: the time to first token (a role-only delta is not one).
        this.ttftMs = this.sched.now() - this.ttftFrom
        return
      }
      const failure = this.encoder.failure?.()
      if (failure) throw failure
      if (this.sourceDone) {
        // A failure to end properly (no terminal event) is still unseen: thrown, not relayed.
        this.tail = this.encoder.end()
        const failed = this.encoder.failure?.()
        if (failed) throw failed
        this.content = true
        return
      }
    }
  }

  /** Encodes the pending items; false when the encoder withheld them all (e.g. a usage chunk nobody asked for). */
  private emit(sink: (bytes: Uint8Array) => void): boolean {
    this.started = true
    // Not held for content: the first item out is the first token. Held: see `fill`.
    if (this.ttftMs === null && this.content) this.ttftMs = this.sched.now() - this.ttftFrom
    const wrote = encodeItems(this.encoder, this.items, sink)
    if (wrote) this.lastWrite = this.sched.now()
    return wrote
  }

  private write(bytes: Uint8Array): void {
    this.controller!.enqueue(bytes)
    this.lastWrite = this.sched.now()
  }

  private tick(): void {
    if (this.finished) return
    const now = this.sched.now()
    const ctx = this.plan?.ctx
    if (this.timedOut === null) {
      // The first token's deadline holds for any source; then the source's own (source.ts).
      const late =
        !this.content && now >= this.firstTokenAt
          ? firstTokenTimeout(ctx?.provider.prefix ?? 'upstream', this.firstTokenAt - this.t0)
          : this.sourceOverdue(now, this.content, this.opts.total)
      if (late !== null) {
        this.timeout(late)
        return
      }
    }
    if (this.release !== null) {
      if (now >= this.holdAt) this.release(true)
    } else if (this.controller && now - this.lastWrite >= this.opts.keepaliveMs) {
      // Not waiting means the client is slow to read: the socket is busy, no keep-alive is needed.
      if (this.waiting) this.write(this.encoder.keepalive)
      else this.lastWrite = now
    }
    this.arm(now)
  }

  /** Arms the timer for the earliest deadline still ahead. */
  private arm(now: number): void {
    let next = Number.POSITIVE_INFINITY
    if (this.release !== null) next = this.holdAt
    else if (this.controller) next = this.lastWrite + this.opts.keepaliveMs
    if (this.timedOut === null) {
      if (!this.content) next = Math.min(next, this.firstTokenAt)
      next = Math.min(next, this.sourceDeadline(now, this.content))
    }
    if (next !== Number.POSITIVE_INFINITY) this.timer.at(next)
  }

  /** The upstream is too slow: the pending (or next) read fails with `err`. */
  private timeout(err: GatewayError): void {
    this.timedOut = err
    this.reader.cancel(err).catch(() => {})
    // The body started and nothing is being read: the client is not reading, so no pull will
    // come to see the error. End here, the body errored: the server drops the connection
    // instead of holding it for a reader that may never come back.
    if (this.controller && !this.waiting && !this.finished) {
      this.finish(err, false, err)
      try {
        this.controller.error(err)
      } catch {}
    }
  }
}
