/**
 * @module
 * The OpenAI-side stream writer shared by every provider. It holds the HTTP status until the
 * upstream's first chunk (so an upstream refusal is still a real HTTP error), then writes each
 * chunk as `data: <json>\n\n` with the gateway's model id, `: keep-alive` comments while the
 * upstream is quiet, `data: [DONE]` at the end, or `data: {"error": ...}` if the upstream fails
 * after the first byte. It is pull-based: a chunk is read from the adapter only when the client
 * has taken the previous one, and a client that leaves cancels the adapter's stream.
 *
 * @example
 * const out = await writeChatStream(await adapter.stream(req, ctx), {
 *   modelId: 'openai/gpt-4o-mini', includeUsage: false, keepaliveMs: 15_000, holdMs: 10_000,
 *   signal: request.signal, onFinish: (r) => usageLog.record(r),
 * })
 * if (out.status === 'error') throw out.error
 * return new Response(out.body, { headers: { 'content-type': 'text/event-stream' } })
 */
import type { UnderlyingSource } from 'bun'
import { abortError } from '../providers/http.ts'
import { encodeSSE } from '../providers/sse/index.ts'
import type { ChatCompletionChunk, ChunkStream, Usage } from '../providers/types.ts'
import { GatewayError } from '../util/errors.ts'

export interface StreamOutcome {
  /** The upstream's usage, whether or not the client asked to see it. */
  usage: Usage | null
  /** Set when the stream failed (before or after the first byte). */
  error: GatewayError | null
  /** Milliseconds from the call to the first chunk; null if none arrived. */
  ttftMs: number | null
  /** The client went away before the end. */
  aborted: boolean
}

export interface WriteChatStreamOptions {
  /** The id the client asked for (`prefix/model`); replaces the upstream's `model`. */
  modelId: string
  /** Forward the final `choices: []` usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean
  keepaliveMs: number
  /** How long to wait for the first chunk before committing to a 200. */
  holdMs: number
  /** The client's request signal. */
  signal?: AbortSignal
  /**
   * Aborted when the server stops waiting for streams (shutdown drain deadline): the stream ends
   * with an error event carrying the signal's reason (`shutting_down`), recorded as such.
   */
  stop?: AbortSignal
  /** Called exactly once, when the stream ends for whatever reason. Must not throw. */
  onFinish: (outcome: StreamOutcome) => void
}

export type WriteChatStreamResult =
  | { status: 'ok'; body: ReadableStream<Uint8Array> }
  | { status: 'error'; error: GatewayError }

/** Shared by every stream: the hot path allocates no encoder and no constant frames. */
const encoder = new TextEncoder()
const KEEPALIVE = encoder.encode(': keep-alive\n\n')
const DONE = encoder.encode('data: [DONE]\n\n')

export function writeChatStream(
  chunks: ChunkStream,
  opts: WriteChatStreamOptions,
): Promise<WriteChatStreamResult> {
  return new ChatStreamWriter(chunks, opts).open()
}

/** What `getReader()` returns; named through a function because the DOM and Node typings differ. */
const readerOf = (s: ChunkStream) => s.getReader()
type Reader = ReturnType<typeof readerOf>
type ReadResult = Awaited<ReturnType<Reader['read']>>

/**
 * One per response; it is also the body's underlying source, so the per-chunk path runs in
 * methods and allocates only the chunk's bytes.
 */
class ChatStreamWriter implements UnderlyingSource<Uint8Array> {
  private readonly reader: Reader
  private readonly t0 = performance.now()
  /** The first read, started before the body exists; consumed by the first pull. */
  private first: Promise<ReadResult> | null = null
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined
  private usage: Usage | null = null
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
    chunks: ChunkStream,
    private readonly opts: WriteChatStreamOptions,
  ) {
    this.reader = readerOf(chunks)
  }

  async open(): Promise<WriteChatStreamResult> {
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
    if (held) this.write(KEEPALIVE)
    this.timer = setTimeout(this.onTick, this.opts.keepaliveMs)
    return { status: 'ok', body }
  }

  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.controller = controller
    this.lastWrite = performance.now()
  }

  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    for (;;) {
      let r: ReadResult
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
        controller.enqueue(DONE)
        return this.close(controller, null)
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

  /** Writes one chunk; false when it was withheld (the usage chunk the client did not ask for). */
  private forward(
    controller: ReadableStreamDefaultController<Uint8Array>,
    chunk: ChatCompletionChunk,
  ): boolean {
    if (this.ttftMs === null) this.ttftMs = performance.now() - this.t0
    if (chunk.usage) this.usage = chunk.usage
    const { includeUsage } = this.opts
    if (!includeUsage && chunk.choices.length === 0 && chunk.usage) return false
    chunk.model = this.opts.modelId
    // OpenAI's shape: `usage: null` on every chunk with include_usage, no `usage` key without it.
    chunk.usage = includeUsage ? (chunk.usage ?? null) : undefined
    controller.enqueue(encoder.encode(encodeSSE(JSON.stringify(chunk))))
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
    if (this.waiting) this.write(KEEPALIVE)
    this.timer = setTimeout(this.onTick, keepaliveMs)
  }

  private failAfterStart(controller: ReadableStreamDefaultController<Uint8Array>, err: unknown): void {
    if (this.finished) return
    const error = toGatewayError(err)
    controller.enqueue(encoder.encode(encodeSSE(JSON.stringify(error.toBody()))))
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

  /** The server stops waiting: end with an error event (if the body has started) and cancel upstream. */
  private cut(): Promise<void> {
    if (this.finished) return Promise.resolve()
    const reason = this.opts.stop?.reason
    const error = reason instanceof GatewayError ? reason : toGatewayError(reason)
    this.cutError = error
    this.finish(error, false)
    if (this.controller) {
      try {
        this.controller.enqueue(encoder.encode(encodeSSE(JSON.stringify(error.toBody()))))
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
    this.opts.onFinish({ usage: this.usage, error, ttftMs: this.ttftMs, aborted })
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
