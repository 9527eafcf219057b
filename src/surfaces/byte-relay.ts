/**
 * @module
 * The base of the same-wire stream relays: the upstream's body chunks in, the client's bytes out,
 * framed at the byte level. Each chunk is cut at its last blank line (`\n\n`, found natively);
 * the unfinished event after it waits for the next chunk. Every complete event is shown to the
 * subclass as a byte range, which it keeps (the common case: the range goes out untouched, with
 * its neighbours, as one subarray — no decode, no encode), drops, or replaces. Only the events a
 * subclass must read (model, usage, errors, the end) are decoded.
 *
 * An upstream that frames with CR or CRLF (legal SSE, rare) is re-framed from the first CR on:
 * its events are parsed and written again with LF, then relayed the same way. One event may hold
 * at most `maxEventBytes` bytes, as on the parsed path.
 *
 * @example
 * class Relay extends ByteRelay {
 *   protected event(buf: Buffer, start: number, end: number) {
 *     return eventName(buf, start) === 'ping' ? null : undefined   // drop pings, keep the rest
 *   }
 * }
 */

import type { Usage } from '../operations/chat.ts'
import type { StreamEncoder } from '../pipeline/stream/encoder.ts'
import type { Relayed } from '../pipeline/surface.ts'
import { maxResponseBytes, responseTooLarge } from '../providers/body-limit.ts'
import { eventFrames } from '../providers/sse/event-frames.ts'
import { type SSEEvent, sseParser } from '../providers/sse/parse.ts'
import { SyncStages } from '../providers/stream-plan.ts'
import type { CallContext } from '../providers/types.ts'
import type { GatewayError } from '../util/errors.ts'

/**
 * A byte relay as the writer runs it (`Forwarding.relay`): the upstream's body chunks as they come
 * into `encoder`, or under a limit (`framed`) one event an item, for the gate before the relay.
 */
export function byteRelayed(
  upstream: Response,
  ctx: CallContext,
  encoder: ByteRelay,
  framed: boolean,
): Relayed {
  const stages = framed ? [eventFrames(maxResponseBytes(ctx.provider), ctx.provider.prefix)] : []
  return { plan: { body: upstream.body!, stages, ctx }, encoder }
}

const LF = 10
const CR = 13
const BLANK = Buffer.from('\n\n')
const EVENT = Buffer.from('event:')
const DATA = Buffer.from('data:')
const text = new TextEncoder()

/**
 * What a subclass does with one event: undefined = send it as it came, null = drop it, bytes (or
 * pieces of bytes, joined once per chunk) = send these instead.
 */
export type EventAction = Uint8Array | readonly Uint8Array[] | null | undefined

/**
 * Events a gate read and found not to be one JSON value, per item it was shown: where each starts
 * in the item. Such an event is malformed (DESIGN §10): the relay that encodes the item drops it
 * and counts it (`malformed`), so nothing reaches the client that the gate did not count. The
 * byte relays read an event's shape, not its JSON; under a limit the gate's parse is the judge.
 */
const unreadable = new WeakMap<Uint8Array, number[]>()

/** The gate read the event at `at` in `item`, and its data is not one JSON value. */
export function markUnreadable(item: Uint8Array, at: number): void {
  const marks = unreadable.get(item)
  if (marks === undefined) unreadable.set(item, [at])
  else marks.push(at)
}

/** `part`, the first bytes of `item`, keeps the marks of `item` that fall in it. */
export function keepMarks(item: Uint8Array, part: Uint8Array): void {
  const marks = unreadable.get(item)
  if (marks !== undefined)
    unreadable.set(
      part,
      marks.filter((at) => at < part.byteLength),
    )
}

export abstract class ByteRelay implements StreamEncoder<Uint8Array> {
  abstract readonly keepalive: Uint8Array
  /** The marks (`markUnreadable`) of the item being encoded, when its offsets are the events'. */
  protected skip: number[] | undefined = undefined
  /** Malformed events dropped (DESIGN §10: skipped and counted). */
  protected skipped = 0
  /**
   * The unfinished event carried over from earlier chunks, in pieces: joined once, when the chunk
   * that ends it arrives (joining on every chunk would copy a long event quadratically).
   */
  private tail: Buffer[] = []
  private tailLength = 0
  /** Set from the first CR on: the re-framing parser, and the events it produced. */
  private reframer: SyncStages<SSEEvent> | null = null
  private readonly reframed: SSEEvent[] = []

  constructor(
    protected readonly maxEventBytes: number,
    protected readonly label: string,
  ) {}

  /** One complete event, `buf[start, end)` (its blank line included). */
  protected abstract event(buf: Buffer, start: number, end: number): EventAction

  abstract end(): Uint8Array | null
  abstract error(err: GatewayError): Uint8Array
  abstract usage(): Usage | null

  encode(chunk: Uint8Array): Uint8Array | null {
    // A gate's item holds complete events, LF-framed: nothing is carried over, nothing re-framed.
    this.skip = this.tail.length === 0 && this.reframer === null ? unreadable.get(chunk) : undefined
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (this.reframer !== null || buf.indexOf(CR) !== -1) buf = this.reframe(buf)
    if (this.tail.length > 0) {
      // Only the new bytes can end the pending event: a blank line in them, or across the seam.
      const pending = this.tail[this.tail.length - 1]!
      const seam = pending[pending.length - 1] === LF && buf[0] === LF
      if (!seam && buf.indexOf(BLANK) === -1) {
        this.tailLength += buf.length
        if (this.tailLength > this.maxEventBytes) throw this.tooLarge()
        this.tail.push(buf)
        return null
      }
      this.tail.push(buf)
      buf = Buffer.concat(this.tail)
      this.tail = []
      this.tailLength = 0
    }
    const cut = buf.lastIndexOf(BLANK)
    const last = cut === -1 ? 0 : cut + 2
    if (last < buf.length) {
      if (buf.length - last > this.maxEventBytes) throw this.tooLarge()
      this.tail = [buf.subarray(last)]
      this.tailLength = buf.length - last
    }
    if (last === 0) return null
    return this.relayEvents(buf, last)
  }

  /**
   * The complete events `buf[0, last)`, each shown to `event`, relayed: the bytes to send, null
   * for none. A subclass may relay them its own way (the chat relay edits them in one copy).
   */
  protected relayEvents(buf: Buffer, last: number): Uint8Array | null {
    let pieces: Uint8Array[] | null = null
    /** Start of the run of events kept as they came, not yet in `pieces`. */
    let kept = 0
    for (let start = 0; start < last; ) {
      const end = buf.indexOf(BLANK, start) + 2
      if (end - start > this.maxEventBytes) throw this.tooLarge()
      const action = this.dropped(start) ? null : this.event(buf, start, end)
      if (action !== undefined) {
        pieces ??= []
        if (kept < start) pieces.push(buf.subarray(kept, start))
        if (action instanceof Uint8Array) pieces.push(action)
        else if (action !== null) for (const piece of action) pieces.push(piece)
        kept = end
      }
      start = end
    }
    if (pieces === null) return buf.subarray(0, last)
    if (kept < last) pieces.push(buf.subarray(kept, last))
    if (pieces.length === 0) return null
    return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)
  }

  /** Whether the event at `start` of the item being encoded is one its gate marked (counted here). */
  protected dropped(start: number): boolean {
    if (this.skip === undefined || !this.skip.includes(start)) return false
    this.skipped++
    return true
  }

  /** Malformed events dropped so far. */
  malformed(): number {
    return this.skipped
  }

  protected tooLarge(): GatewayError {
    this.tail = []
    this.tailLength = 0
    return responseTooLarge(this.label, this.maxEventBytes, 'a stream event')
  }

  /** Parses what arrives and writes it again with LF line ends (see the module note). */
  private reframe(buf: Buffer): Buffer {
    if (this.reframer === null) {
      const parser = sseParser({ maxEventBytes: this.maxEventBytes, label: this.label })
      this.reframer = new SyncStages<SSEEvent>([parser], (ev) => this.reframed.push(ev))
      // The carried-over bytes hold no CR: they start the parser's input.
      for (const piece of this.tail) this.reframer.push(piece)
      this.tail = []
      this.tailLength = 0
    }
    this.reframer.push(buf)
    let out = ''
    for (const ev of this.reframed) {
      if (ev.event !== undefined) out += `event: ${ev.event}\n`
      out += `data: ${ev.data.replaceAll('\n', '\ndata: ')}\n\n`
    }
    this.reframed.length = 0
    return Buffer.from(text.encode(out))
  }
}

/** The event's `event:` field when it is the first line (as every provider sends it), else undefined. */
export function eventName(buf: Buffer, start: number): string | undefined {
  if (!startsWith(buf, start, EVENT)) return undefined
  const eol = buf.indexOf(LF, start)
  let from = start + EVENT.length
  if (buf[from] === 32) from++
  return buf.toString('latin1', from, eol)
}

/** The event's data (its `data:` lines joined with LF), decoded. */
export function eventData(buf: Buffer, start: number, end: number): string {
  let data: string | undefined
  for (let at = start; at < end; ) {
    let eol = buf.indexOf(LF, at)
    if (eol === -1 || eol > end) eol = end
    if (startsWith(buf, at, DATA)) {
      let from = at + DATA.length
      if (buf[from] === 32) from++
      const line = buf.toString('utf8', from, eol)
      data = data === undefined ? line : `${data}\n${line}`
    }
    at = eol + 1
  }
  return data ?? ''
}

/** `eventValue`: the event's data is not one JSON value. */
export const NOT_JSON: unique symbol = Symbol('not JSON')
/** `eventValue`: the event has no data (a comment, a bare `event:` line). */
export const NO_DATA: unique symbol = Symbol('no data')

/**
 * The event's data as `JSON.parse` reads it, `NOT_JSON`, or `NO_DATA`. The common framing — one
 * `data: {…}` line, after an `event:` line or not — is parsed on its bytes in place
 * (`Bun.JSONL.parseChunk`: JSC's JSON parser, no string of the line made; stop 64's chat gate); a
 * line it does not take as exactly one value (a second value, text after it, an error) and any
 * other framing go through the decoded data and `JSON.parse`, so the value is always its.
 */
export function eventValue(buf: Buffer, start: number, end: number): unknown {
  let at = start
  if (startsWith(buf, at, EVENT)) {
    const eol = buf.indexOf(LF, at)
    at = eol === -1 || eol >= end ? end : eol + 1
  }
  if (at < end && startsWith(buf, at, DATA)) {
    let from = at + DATA.length
    if (buf[from] === 32) from++
    const eol = end - 2
    if (buf[from] === OPEN_BRACE && buf[end - 1] === LF && buf.indexOf(LF, from) === eol) {
      const line = Bun.JSONL.parseChunk(buf, from, eol)
      if (line.done && line.values.length === 1) return line.values[0]
    }
  }
  const data = eventData(buf, start, end)
  if (data === '') return NO_DATA
  try {
    return JSON.parse(data)
  } catch {
    return NOT_JSON
  }
}

/** Whether `buf` holds `pattern` at `at`. */
export function startsWith(buf: Uint8Array, at: number, pattern: Uint8Array): boolean {
  if (at + pattern.length > buf.length) return false
  for (let i = 0; i < pattern.length; i++) if (buf[at + i] !== pattern[i]) return false
  return true
}

/**
 * Bytes of the string value of the first `key` (given with its quotes: `"delta"`) in
 * `buf[start, end)` whose value is a string, as written (escapes count their own bytes, never
 * fewer than the UTF-8 bytes they stand for); 0 without one. JSON whitespace may sit around the
 * colon. The key cannot match inside a string: a quote there is escaped. A value cut by `end`
 * counts to `end`.
 */
export function stringValueBytes(buf: Buffer, start: number, end: number, key: Uint8Array): number {
  for (let at = buf.indexOf(key, start); at !== -1 && at < end; at = buf.indexOf(key, at + 1)) {
    const i = valueAt(buf, at + key.length, end)
    if (i === -1 || buf[i] !== QUOTE) continue
    const close = closingQuote(buf, i + 1, end)
    return close === -1 ? end - (i + 1) : close - (i + 1)
  }
  return 0
}

/**
 * Where the value of a key ending at `keyEnd` starts: past JSON whitespace, the colon and JSON
 * whitespace again; -1 when no colon follows (the match was not a key) or nothing before `end`.
 */
export function valueAt(buf: Uint8Array, keyEnd: number, end: number): number {
  let i = skipSpace(buf, keyEnd, end)
  if (i >= end || buf[i] !== COLON) return -1
  i = skipSpace(buf, i + 1, end)
  return i < end ? i : -1
}

/**
 * The quote that closes a JSON string whose text starts at `from`, before `end`: the first one
 * not escaped (after an even run of backslashes); -1 when the string runs past `end`.
 */
export function closingQuote(buf: Buffer, from: number, end: number): number {
  for (let q = buf.indexOf(QUOTE, from); q !== -1 && q < end; q = buf.indexOf(QUOTE, q + 1)) {
    let i = q - 1
    while (i >= from && buf[i] === BACKSLASH) i--
    if ((q - 1 - i) % 2 === 0) return q
  }
  return -1
}

/** The first index from `i` (before `end`) that is not JSON whitespace. */
function skipSpace(buf: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = buf[i]
    if (c !== SPACE && c !== TAB && c !== CR && c !== LF) break
    i++
  }
  return i
}

const QUOTE = 34
const OPEN_BRACE = 123
const BACKSLASH = 92
const COLON = 58
const SPACE = 32
const TAB = 9
