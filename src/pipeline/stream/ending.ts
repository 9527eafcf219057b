/**
 * @module
 * How a stream writer's stream ends (writer.ts extends this, as this extends source.ts's reader):
 * the encoder's ending and the body closed, the error frame after a failure past the first byte,
 * the client leaving (`abort`), the server stopping the stream (`cut`), and `finish`, which every
 * one of them reaches once: the upstream let go, then the outcome recorded (`onFinish`). The
 * writer's state that an ending reads (the body's controller, the first-token time, the held
 * ending) lives here with it.
 */
import type { GatewayError } from '../../util/errors.ts'
import type { Timer } from '../../util/scheduler.ts'
import { toGatewayError } from '../errors.ts'
import { outcomeOf, type StreamEncoder } from './encoder.ts'
import { SourceReader } from './source.ts'
import type { WriteStreamOptions } from './types.ts'

export type Controller = ReadableStreamDefaultController<Uint8Array>

export abstract class StreamEnding<T> extends SourceReader<T> {
  protected controller: Controller | undefined
  protected ttftMs: number | null = null
  /** An item was encoded (StreamOutcome.started). */
  protected started = false
  /** Why the stream was cut by `stop`, once it was. */
  protected cutError: GatewayError | null = null
  /** The encoder's ending, taken while still holding (undefined: not taken yet). */
  protected tail: Uint8Array | null | undefined = undefined
  /**
   * The listeners `finish` takes off the request's and the server's signals: the writer's own
   * fields (`abort`, `cut`), as an arrow in a field here would cost every stream a second scope.
   */
  protected abstract readonly onAbort: () => void
  protected abstract readonly onStop: () => void
  /** The writer's one timer (hold, first token, keep-alive, the source's deadlines): cancelled at the end. */
  protected abstract readonly timer: Timer

  constructor(
    protected readonly encoder: StreamEncoder<T>,
    protected readonly opts: WriteStreamOptions<T>,
  ) {
    super()
  }

  protected end(controller: Controller): void {
    const tail = this.tail !== undefined ? this.tail : this.encoder.end()
    if (tail) controller.enqueue(tail)
    this.close(controller, this.encoder.failure?.() ?? null)
  }

  /** The source's failure as the client may see it. */
  protected sourceFailure(err: unknown): GatewayError {
    const error = toGatewayError(err, 'stream')
    return this.opts.scrub ? this.opts.scrub(error) : error
  }

  protected failAfterStart(controller: Controller, err: unknown): void {
    if (this.finished) return
    const error = this.sourceFailure(err)
    controller.enqueue(this.encoder.error(error))
    this.close(controller, error)
  }

  protected close(controller: Controller, error: GatewayError | null): void {
    this.finish(error, false, error)
    controller.close()
  }

  /** The client left (body cancelled or request signal aborted): cancel the source. */
  protected abort(reason?: unknown): Promise<void> {
    if (this.finished) return Promise.resolve()
    const cancelled = this.finish(null, true, reason)
    try {
      this.controller?.close() // the signal fired first: end the body too
    } catch {}
    return cancelled
  }

  /** The server stops waiting: end with an error event (if the body has started), cancel upstream. */
  protected cut(): Promise<void> {
    if (this.finished) return Promise.resolve()
    const error = toGatewayError(this.opts.stop?.reason, 'stream')
    this.cutError = error
    const cancelled = this.finish(error, false, error)
    if (this.controller) {
      try {
        this.controller.enqueue(this.encoder.error(error))
        this.controller.close()
      } catch {}
    }
    return cancelled
  }

  /**
   * Cancels the source unless it ended by itself, then records the outcome once: the upstream is
   * let go before `onFinish` starts any ledger work (a settlement's first writes to the store).
   */
  protected finish(error: GatewayError | null, aborted: boolean, reason: unknown): Promise<void> {
    this.finished = true
    this.timer.cancel()
    this.opts.signal?.removeEventListener('abort', this.onAbort)
    this.opts.stop?.removeEventListener('abort', this.onStop)
    const cancelled = this.sourceDone ? Promise.resolve() : this.reader.cancel(reason).catch(() => {})
    this.opts.onFinish(outcomeOf(this.encoder, error, aborted, this.ttftMs, this.started))
    return cancelled
  }
}
