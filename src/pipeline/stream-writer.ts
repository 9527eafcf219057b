/**
 * @module
 * The stream writer every surface shares. It holds the HTTP status until the source's first item
 * (so an upstream refusal is still a real HTTP error), then writes each item through the
 * surface's `StreamEncoder`, the encoder's keep-alive while the upstream is quiet, the encoder's
 * ending, or its error frame if the upstream fails after the first byte. It is pull-based: an
 * item is read from the source only when the client has taken the previous one, and a client
 * that leaves cancels the source (and so the upstream request).
 *
 * @example
 * const out = await writeStream(await adapter.stream(req, ctx), new ChatChunkEncoder(id, false), {
 *   keepaliveMs: 15_000, holdMs: 10_000, signal: request.signal, onFinish: (r) => record(r),
 * })
 * if (out.status === 'error') throw out.error
 * return new Response(out.body, { headers: { 'content-type': 'text/event-stream' } })
 */
import type { UnderlyingSource } from 'bun'
import { abortError } from '../providers/http.ts'
import type { Usage } from '../providers/types.ts'
import { GatewayError } from '../util/errors.ts'

/**
 * A surface's wire encoding of one stream, stateful (one per response). The writer calls
 * `encode` once per source item, then `end` after the last one, or `error` when the source fails
 * after the first byte; `usage` and `failure` are read once, when the stream finishes.
 */
export interface StreamEncoder<T> {
  /** Bytes for one item, or null to send nothing for it. */
  encode(item: T): Uint8Array | null
  /** Bytes after the last item (e.g. `data: [DONE]`), or null. */
  end(): Uint8Array | null
  /** The frame that reports a failure after the first byte. */
  error(err: GatewayError): Uint8Array
  /** Sent while the upstream is quiet: an SSE comment, or a surface's own ping event. */
  readonly keepalive: Uint8Array
  /** Token counts seen in the stream, for the usage record. */
  usage(): Usage | null
  /** An error the upstream reported in-band and the encoder relayed as it was (pass-through). */
  failure?(): GatewayError | null
  /**
   * Characters of generated text (content, reasoning, tool names and arguments) encoded for the
   * client so far: the basis of the token estimate when the client disconnects.
   */
  relayedChars?(): number
}

export interface StreamOutcome {
  /** The upstream's usage, whether or not the client asked to see it. */
  usage: Usage | null
  /** Set when the stream failed (before or after the first byte). */
  error: GatewayError | null
  /** Milliseconds from the call to the first chunk; null if none arrived. */
  ttftMs: number | null
  /** The client went away before the end. */
  aborted: boolean
  /** See StreamEncoder.relayedChars; 0 when the encoder does not count. */
  relayedChars: number
}

export interface WriteStreamOptions {
  keepaliveMs: number
  /** How long to wait for the first chunk before committing to a 200. */
  holdMs: number
  /** The client's request signal. */
  signal?: AbortSignal
  /**
   * Aborted when the server stops waiting for streams (the shutdown drain's deadline): the stream
   * ends with the surface's error event for the signal's reason (`shutting_down`), recorded so.
   */
  stop?: AbortSignal
  /** Called exactly once, when the stream ends for whatever reason. Must not throw. */
  onFinish: (outcome: StreamOutcome) => void
}

export type WriteStreamResult =
  | { status: 'ok'; body: ReadableStream<Uint8Array> }
  | { status: 'error'; error: GatewayError }

export function writeStream<T>(
  items: ReadableStream<T>,
  encoder: StreamEncoder<T>,
  opts: WriteStreamOptions,
): Promise<WriteStreamResult> {
  return new StreamWriter(items, encoder, opts).open()
}

/** What `getReader()` returns; named through a function because the DOM and Node typings differ. */
const readerOf = <T>(s: ReadableStream<T>) => s.getReader()
type Reader<T> = ReturnType<typeof readerOf<T>>
type ReadResult<T> = Awaited<ReturnType<Reader<T>['read']>>

/**
 * One per response; it is also the body's underlying source, so the per-chunk path runs in
 * methods and allocates only the chunk's bytes.
 */
class StreamWriter<T> implements UnderlyingSource<Uint8Array> {
  private readonly reader: Reader<T>
  private readonly t0 = performance.now()
  /** The first read, started before the body exists; consumed by the first pull. */
  private first: Promise<ReadResult<T>> | null = null
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined
  private ttftMs: number | null = null
  private finished = false
  /** A pull is waiting for the adapter: only then is the client owed a keep-alive. */
  private waiting = false
  private lastWrite = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly onTick = (): void => this.tick()
  private readonly onAbort = (): void => void this.abort()
  private readonly onStop = (): void => void this.cut()
  /** Why the stream was cut by `stop`, once it was. */
  private cutError: GatewayError | null = null

  constructor(
    items: ReadableStream<T>,
    private readonly encoder: StreamEncoder<T>,
    private readonly opts: WriteStreamOptions,
  ) {
    this.reader = readerOf(items)
  }

  async open(): Promise<WriteStreamResult> {
    const { signal } = this.opts
    if (signal?.aborted) {
      await this.abort()
      return { status: 'error', error: clientClosed() }
    }
    signal?.addEventListener('abort', this.onAbort, { once: true })
    if (this.opts.stop?.aborted) {
      await this.cut()
      return { status: 'error', error: this.cutError! }
    }
    this.opts.stop?.addEventListener('abort', this.onStop, { once: true })
    const first = this.reader.read()
    this.first = first
    let failure: { err: unknown } | undefined
    let holdTimer: ReturnType<typeof setTimeout> | undefined
    const held = await Promise.race([
      first.then(
        () => false,
        (err: unknown) => {
          failure = { err }
          return false
        },
      ),
      new Promise<boolean>((resolve) => {
        holdTimer = setTimeout(resolve, this.opts.holdMs, true)
      }),
    ])
    clearTimeout(holdTimer)
    // An abort during the hold cancels the reader, which settles `first`: check it before anything else.
    if (this.finished) return { status: 'error', error: this.cutError ?? clientClosed() }
    if (failure !== undefined) {
      const error = toGatewayError(failure.err)
      this.finish(error, false)
      return { status: 'error', error }
    }
    const body = new ReadableStream<Uint8Array>(this, { highWaterMark: 0 })
    // Past the hold with nothing to say yet: a comment makes the server send the 200 now.
    if (held) this.write(this.encoder.keepalive)
    this.timer = setTimeout(this.onTick, this.opts.keepaliveMs)
    return { status: 'ok', body }
  }

  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.controller = controller
    this.lastWrite = performance.now()
  }

  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    for (;;) {
      let r: ReadResult<T>
      this.waiting = true
      try {
        const first = this.first
        this.first = null
        r = await (first ?? this.reader.read())
      } catch (err) {
        this.waiting = false
        return this.failAfterStart(controller, err)
      }
      this.waiting = false
      if (this.finished) return // cancelled while the read was pending
      if (r.done) {
        let failure: GatewayError | null = null
        try {
          const tail = this.encoder.end()
          if (tail) controller.enqueue(tail)
          failure = this.encoder.failure?.() ?? null
        } catch (err) {
          return this.failAfterStart(controller, err)
        }
        return this.close(controller, failure)
      }
      try {
        if (this.forward(controller, r.value)) return
      } catch (err) {
        // A malformed chunk from an adapter must still end the stream properly.
        return this.failAfterStart(controller, err)
      }
    }
  }

  cancel(reason: unknown): Promise<void> {
    return this.abort(reason)
  }

  /** Writes one item; false when the encoder withheld it (e.g. a usage chunk nobody asked for). */
  private forward(controller: ReadableStreamDefaultController<Uint8Array>, item: T): boolean {
    if (this.ttftMs === null) this.ttftMs = performance.now() - this.t0
    const bytes = this.encoder.encode(item)
    if (bytes === null) return false
    controller.enqueue(bytes)
    this.lastWrite = performance.now()
    return true
  }

  private write(bytes: Uint8Array): void {
    this.controller!.enqueue(bytes)
    this.lastWrite = performance.now()
  }

  /** Runs at most about once per keep-alive interval, however many chunks flow. */
  private tick(): void {
    this.timer = undefined
    if (this.finished) return
    const { keepaliveMs } = this.opts
    const quiet = performance.now() - this.lastWrite
    if (quiet < keepaliveMs) {
      this.timer = setTimeout(this.onTick, keepaliveMs - quiet)
      return
    }
    // Not waiting means the client is slow to read: the socket is busy, no keep-alive is needed.
    if (this.waiting) this.write(this.encoder.keepalive)
    this.timer = setTimeout(this.onTick, keepaliveMs)
  }

  private failAfterStart(controller: ReadableStreamDefaultController<Uint8Array>, err: unknown): void {
    if (this.finished) return
    const error = toGatewayError(err)
    controller.enqueue(this.encoder.error(error))
    this.close(controller, error)
  }

  private close(controller: ReadableStreamDefaultController<Uint8Array>, error: GatewayError | null): void {
    this.finish(error, false)
    controller.close()
  }

  /** The client left (body cancelled or request signal aborted): cancel the adapter's stream. */
  private abort(reason?: unknown): Promise<void> {
    if (this.finished) return Promise.resolve()
    this.finish(null, true)
    try {
      this.controller?.close() // the signal fired first: end the body too
    } catch {}
    return this.reader.cancel(reason).catch(() => {})
  }

  /** The server stops waiting: end with an error event (if the body has started), cancel upstream. */
  private cut(): Promise<void> {
    if (this.finished) return Promise.resolve()
    const error = toGatewayError(this.opts.stop?.reason)
    this.cutError = error
    this.finish(error, false)
    if (this.controller) {
      try {
        this.controller.enqueue(this.encoder.error(error))
        this.controller.close()
      } catch {}
    }
    return this.reader.cancel(error).catch(() => {})
  }

  private finish(error: GatewayError | null, aborted: boolean): void {
    this.finished = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.opts.signal?.removeEventListener('abort', this.onAbort)
    this.opts.stop?.removeEventListener('abort', this.onStop)
    let usage: Usage | null = null
    let relayedChars = 0
    try {
      usage = this.encoder.usage()
      relayedChars = this.encoder.relayedChars?.() ?? 0
    } catch {}
    this.opts.onFinish({ usage, error, ttftMs: this.ttftMs, aborted, relayedChars })
  }
}

const clientClosed = (): GatewayError => abortError(undefined)

function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err
  return new GatewayError(
    502,
    'upstream_error',
    'The upstream stream failed unexpectedly. Retry the request.',
  )
}
