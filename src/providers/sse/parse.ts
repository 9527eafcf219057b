/**
 * @module
 * Server-sent events parser, following the WHATWG "event stream interpretation" rules: lines end
 * in LF, CR or CRLF; `data` lines of one event are joined with LF; comment lines (`:`) and
 * `retry` are ignored; an event without data is dropped; an unfinished event at the end of the
 * body is discarded.
 *
 * Linear in the bytes received: each chunk is searched for line breaks once, when it arrives, and
 * an unfinished line is kept as pieces joined once, when its end arrives (the old parser rescanned
 * the pending text on every read: one 50 MB line cost 5.6 s). One event may hold at most
 * `maxEventBytes` characters (data, plus the line still arriving), so an upstream cannot make the
 * gateway buffer without bound.
 */
import { DEFAULT_MAX_RESPONSE_BYTES, responseTooLarge } from '../body-limit.ts'

export interface SSEEvent {
  /** The `event:` field; absent for the default `message` type. */
  event?: string
  data: string
  /** The last event id seen on the stream so far (ids persist across events, as in browsers). */
  id?: string
}

export interface SSELimits {
  /** Largest event, in characters after UTF-8 decoding (never more than its bytes). */
  maxEventBytes: number
  /** The provider's prefix, for the error message. */
  label: string
}

const DEFAULT_LIMITS: SSELimits = { maxEventBytes: DEFAULT_MAX_RESPONSE_BYTES, label: 'upstream' }

const LF = 10
const CR = 13

/**
 * The parser state lives in the transformer, so one instance serves exactly one stream.
 * A streaming `TextDecoder` keeps a multibyte character that is split across chunks intact.
 */
class SSETransformer implements Transformer<Uint8Array, SSEEvent> {
  private readonly decoder = new TextDecoder()
  private readonly lineBreak = /[\r\n]/g
  /** The line still arriving, in pieces (each chunk's tail); `pendingLength` is their total. */
  private pending: string[] = []
  private pendingLength = 0
  /** The previous chunk ended in CR: an LF at the start of the next one belongs to it. */
  private pendingCR = false
  private data: string[] = []
  /** Characters in `data`, with the LFs that will join them. */
  private dataLength = 0
  private event: string | undefined = undefined
  private lastId = ''

  constructor(private readonly limits: SSELimits) {}

  transform(chunk: Uint8Array, controller: TransformStreamDefaultController<SSEEvent>): void {
    this.feed(this.decoder.decode(chunk, { stream: true }), controller)
  }

  flush(controller: TransformStreamDefaultController<SSEEvent>): void {
    // Complete lines still count (they may set fields), but the unfinished event is discarded.
    this.feed(this.decoder.decode(), controller)
  }

  private feed(chunk: string, controller: TransformStreamDefaultController<SSEEvent>): void {
    if (chunk.length === 0) return
    let start = 0
    if (this.pendingCR) {
      this.pendingCR = false
      if (chunk.charCodeAt(0) === LF) start = 1
    }
    const re = this.lineBreak
    re.lastIndex = start
    for (let m = re.exec(chunk); m !== null; m = re.exec(chunk)) {
      const i = m.index
      const tail = chunk.slice(start, i)
      let line = tail
      if (this.pending.length > 0) {
        this.pending.push(tail)
        line = this.pending.join('')
        this.pending = []
        this.pendingLength = 0
      }
      this.line(line, controller)
      if (chunk.charCodeAt(i) === CR) {
        if (i + 1 === chunk.length) this.pendingCR = true
        else if (chunk.charCodeAt(i + 1) === LF) re.lastIndex = i + 2
      }
      start = re.lastIndex
    }
    if (start < chunk.length) {
      this.pending.push(start === 0 ? chunk : chunk.slice(start))
      this.pendingLength += chunk.length - start
      this.checkSize(0)
    }
  }

  private line(line: string, controller: TransformStreamDefaultController<SSEEvent>): void {
    if (line.length === 0) {
      this.dispatch(controller)
      return
    }
    const colon = line.indexOf(':')
    if (colon === 0) return // comment
    let field = line
    let value = ''
    if (colon > 0) {
      field = line.slice(0, colon)
      value = line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1)
    }
    switch (field) {
      case 'data':
        this.checkSize(value.length + (this.data.length > 0 ? 1 : 0))
        this.dataLength += value.length + (this.data.length > 0 ? 1 : 0)
        this.data.push(value)
        break
      case 'event':
        this.event = value
        break
      case 'id':
        if (!value.includes('\0')) this.lastId = value
        break
      // `retry` only matters to a reconnecting browser; other fields are ignored by the spec.
    }
  }

  /** Throws when the event, with `adding` more characters, would pass the limit. */
  private checkSize(adding: number): void {
    const { maxEventBytes, label } = this.limits
    if (this.dataLength + this.pendingLength + adding > maxEventBytes) {
      // Drop what was buffered now: the stream is about to error and be cancelled.
      this.pending = []
      this.data = []
      throw responseTooLarge(label, maxEventBytes, 'a stream event')
    }
  }

  private dispatch(controller: TransformStreamDefaultController<SSEEvent>): void {
    if (this.data.length > 0) {
      // Same object shape for every event keeps the consumers' property access monomorphic.
      controller.enqueue({
        event: this.event === '' ? undefined : this.event,
        data: this.data.length === 1 ? this.data[0]! : this.data.join('\n'),
        id: this.lastId === '' ? undefined : this.lastId,
      })
    }
    this.data = []
    this.dataLength = 0
    this.event = undefined
  }
}

/** The parser as a transformer (bytes → events), for a `StreamPlan` stage. One per stream. */
export function sseParser(limits: SSELimits = DEFAULT_LIMITS): Transformer<Uint8Array, SSEEvent> {
  return new SSETransformer(limits)
}

/**
 * Parses a byte stream of server-sent events. Cancelling the returned stream cancels `body`
 * (which, for a `fetch` body, closes the upstream connection); so does an event larger than
 * `limits.maxEventBytes`, which errors the stream with 502 `upstream_response_too_large`.
 *
 * @example
 * for await (const ev of parseSSE(res.body!)) if (ev.data !== '[DONE]') handle(JSON.parse(ev.data))
 */
export function parseSSE(
  body: ReadableStream<Uint8Array>,
  limits: SSELimits = DEFAULT_LIMITS,
): ReadableStream<SSEEvent> {
  return body.pipeThrough(new TransformStream(new SSETransformer(limits)))
}

/** An event's data is JSON (an upstream that sends anything else is skipped or failed, per wire). */
export function isJson(data: string): boolean {
  try {
    JSON.parse(data)
    return true
  } catch {
    return false
  }
}
