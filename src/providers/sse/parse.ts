/**
 * @module
 * Server-sent events parser, following the WHATWG "event stream interpretation" rules: lines end
 * in LF, CR or CRLF; `data` lines of one event are joined with LF; comment lines (`:`) and
 * `retry` are ignored; an event without data is dropped; an unfinished event at the end of the
 * body is discarded.
 */

export interface SSEEvent {
  /** The `event:` field; absent for the default `message` type. */
  event?: string
  data: string
  /** The last event id seen on the stream so far (ids persist across events, as in browsers). */
  id?: string
}

const LF = 10
const CR = 13

/**
 * The parser state lives in the transformer, so one instance serves exactly one stream.
 * A streaming `TextDecoder` keeps a multibyte character that is split across chunks intact.
 */
class SSETransformer implements Transformer<Uint8Array, SSEEvent> {
  private readonly decoder = new TextDecoder()
  /** Text after the last line break, waiting for the rest of its line. */
  private partial = ''
  /** The previous chunk ended in CR: an LF at the start of the next one belongs to it. */
  private pendingCR = false
  private data = ''
  private hasData = false
  private event: string | undefined = undefined
  private lastId = ''

  transform(chunk: Uint8Array, controller: TransformStreamDefaultController<SSEEvent>): void {
    this.feed(this.decoder.decode(chunk, { stream: true }), controller)
  }

  flush(controller: TransformStreamDefaultController<SSEEvent>): void {
    // Complete lines still count (they may set fields), but the unfinished event is discarded.
    this.feed(this.decoder.decode(), controller)
  }

  private feed(chunk: string, controller: TransformStreamDefaultController<SSEEvent>): void {
    if (chunk.length === 0) return
    let text = this.partial.length > 0 ? this.partial + chunk : chunk
    let start = 0
    if (this.pendingCR) {
      this.pendingCR = false
      if (text.charCodeAt(0) === LF) start = 1
    }
    const n = text.length
    for (let i = start; i < n; i++) {
      const c = text.charCodeAt(i)
      if (c !== LF && c !== CR) continue
      this.line(text.slice(start, i), controller)
      if (c === CR) {
        if (i + 1 === n) this.pendingCR = true
        else if (text.charCodeAt(i + 1) === LF) i++
      }
      start = i + 1
    }
    text = start < n ? text.slice(start) : ''
    this.partial = text
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
        this.data = this.hasData ? `${this.data}\n${value}` : value
        this.hasData = true
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

  private dispatch(controller: TransformStreamDefaultController<SSEEvent>): void {
    if (this.hasData) {
      // Same object shape for every event keeps the consumers' property access monomorphic.
      controller.enqueue({
        event: this.event === '' ? undefined : this.event,
        data: this.data,
        id: this.lastId === '' ? undefined : this.lastId,
      })
    }
    this.data = ''
    this.hasData = false
    this.event = undefined
  }
}

/**
 * Parses a byte stream of server-sent events. Cancelling the returned stream cancels `body`
 * (which, for a `fetch` body, closes the upstream connection).
 *
 * @example
 * for await (const ev of parseSSE(res.body!)) if (ev.data !== '[DONE]') handle(JSON.parse(ev.data))
 */
export function parseSSE(body: ReadableStream<Uint8Array>): ReadableStream<SSEEvent> {
  return body.pipeThrough(new TransformStream(new SSETransformer()))
}
