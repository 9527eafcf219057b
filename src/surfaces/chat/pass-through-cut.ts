/**
 * @module
 * The cut at the output allowance (DESIGN §11) on the chat → openai pass-through: under a token or
 * money limit the answer keeps its byte relay (relay-bytes.ts) and this gate counts it. Each
 * upstream event (a read's complete events an item, `eventFrames(…, batch)`) is read for its choices' generated text only, and
 * counted by the translated path's own gate (`ChunkGate`, pipeline/output-cut.ts: the same count,
 * carried whitespace, growth and cut). Every event it lets through goes on as the upstream wrote
 * it (the relay swaps only `model`, and withholds the usage chunk a client did not ask for). At
 * the cut, the ending is written as upstream events — a chunk per open choice with
 * `finish_reason: "length"`, the usage chunk (the input as reserved, the output as counted),
 * `[DONE]` — and goes through the same relay, so the client reads what the translated path wrote.
 *
 * Each event is parsed once by JSC's JSON parser (measured cheaper under Bun's engine than
 * reading the text fields off the bytes by hand, which this file did until 2026-11-29 — 1.5–2 ×
 * the parse's CPU on the bench's events): the common one-line `data: {…}` event on its bytes in
 * place (`Bun.JSONL.parseChunk`, no string of the line made: stop 64), any other through its
 * decoded data and `JSON.parse`. Its chunk is counted and judged by the translated path's gate
 * itself (`ChunkGate.admit`).
 *
 * A JSON request under a limit is sent upstream as a stream (`streamingBody`) and the events,
 * as the gate let them through, put together as the chat completion (`assembleChat`): the same
 * assembly, checks and body as the translated path's (`completeWithin`), without its canonical
 * request and its adapter; each event parsed once, by the gate, framed as the stream relay frames
 * them (a read's events an item: no object an event until its chunk).
 *
 * @example
 * const gate = new ChatCutGate(allowance, reservation.tokens - reservation.outputTokens)
 * writeStream({ body, stages: [eventFrames(max, label, true)], ctx }, relay, { gate })
 */
import type { ChatCompletionChunk, Usage } from '../../operations/chat.ts'
import type { OutputAllowance } from '../../pipeline/output-allowance.ts'
import { Assembly, ChunkGate } from '../../pipeline/output-cut.ts'
import type { CutGate } from '../../pipeline/stream/types.ts'
import type { EncodeContext } from '../../pipeline/surface.ts'
import { invalidResponse, streamInterrupted } from '../../providers/http.ts'
import { eventError } from '../../providers/openai/stream.ts'
import { eventData, eventName, keepMarks, markUnreadable, startsWith } from '../byte-relay.ts'

const utf8 = new TextEncoder()
const DONE_EVENT = utf8.encode('data: [DONE]\n\n')
const LF = 10
const OPEN_BRACE = 123
/** `data: ` */
const DATA_PREFIX = 6
const DATA_LINE = Buffer.from('data: ')
const BLANK = Buffer.from('\n\n')

/**
 * What the gate read of an item (a read's complete events, or one event), for the assembly of a
 * JSON answer to reuse: per event, in order, its chunk as parsed — or, for an event whose chunk
 * the assembly must judge itself (none, an error, an `event:` line), the offset it starts at.
 */
type ReadEvents = Array<ChatCompletionChunk | number>
const parsed = new WeakMap<Uint8Array, ReadEvents>()

/**
 * The chunk an event carries; null when it carries none (no data, `[DONE]`, a JSON value that is
 * not an object with a `choices` array: the relay's to judge); false when its data is not one
 * JSON value (malformed, DESIGN §10: the relay drops it). The common event — one `data: {…}`
 * line — is parsed off its bytes as it is; any other (`event:` lines, data split over lines) has
 * its data lines joined first (`eventData`).
 */
function eventChunk(
  buf: Buffer,
  start: number,
  end: number,
  /** The event is one line: its first line feed is its blank line's (`walk` found it so). */
  singleLine: boolean,
): ChatCompletionChunk | null | false {
  const oneLine =
    singleLine &&
    end - start > DATA_PREFIX + 2 &&
    buf[start + DATA_PREFIX] === OPEN_BRACE &&
    startsWith(buf, start, DATA_LINE)
  return oneLine ? lineChunk(buf, start + DATA_PREFIX, end - 2) : chunkOf(eventData(buf, start, end))
}

/**
 * The chunk in `buf[from, to)`, one line of JSON, parsed off the bytes (`Bun.JSONL.parseChunk`:
 * JSC's JSON parser on the bytes in place, no string of the line made), as `chunkOf` reads it. A
 * line that is not exactly one JSON value leaves `done` false (a second value, text after it, an
 * error): that rare line is judged by `JSON.parse` itself.
 */
function lineChunk(buf: Buffer, from: number, to: number): ChatCompletionChunk | null | false {
  const line = Bun.JSONL.parseChunk(buf, from, to)
  if (!line.done || line.values.length !== 1) return chunkOf(buf.toString('utf8', from, to))
  return asChunk(line.values[0])
}

/** `data` parsed as a chunk: null without one (see `eventChunk`), false when not one JSON value. */
function chunkOf(data: string): ChatCompletionChunk | null | false {
  // No chunk: an empty event (a comment), [DONE].
  if (data === '' || data === '[DONE]') return null
  try {
    return asChunk(JSON.parse(data))
  } catch {
    return false
  }
}

/** A parsed value as a chunk: a JSON object with a `choices` array, or null. */
function asChunk(chunk: unknown): ChatCompletionChunk | null {
  if (chunk === null || typeof chunk !== 'object') return null
  return Array.isArray((chunk as { choices?: unknown }).choices) ? (chunk as ChatCompletionChunk) : null
}

/**
 * Its items are a read's complete events (`eventFrames(…, batch)`), on the stream relay and on a
 * JSON answer alike; refused at an event, its ending starts with the events of the item before
 * it, so the relay gets them as it would have. Each event is looked at once: found by one search
 * for its first line feed (a one-line event's blank line; a second search for the blank line of
 * one of several lines), parsed once, and — `whole`, a JSON answer's — kept as parsed for
 * `assembleChat` (a stream's gate keeps nothing: its reads are relayed as bytes).
 */
export class ChatCutGate implements CutGate<Uint8Array> {
  private readonly chunks: ChunkGate
  /** The item refused, up to the event refused: relayed ahead of the ending. */
  private before: Uint8Array | null = null

  constructor(
    allowance: OutputAllowance,
    inputTokens: number,
    private readonly whole = false,
  ) {
    this.chunks = new ChunkGate(allowance, inputTokens)
  }

  get cut(): boolean {
    return this.chunks.cut
  }

  get counted(): number {
    return this.chunks.counted
  }

  get input(): number {
    return this.chunks.input
  }

  mark(): () => void {
    return this.chunks.mark()
  }

  admit(item: Uint8Array): boolean | Promise<boolean> {
    const read: ReadEvents | null = this.whole ? [] : null
    if (read) parsed.set(item, read)
    return this.walk(item, Buffer.from(item.buffer, item.byteOffset, item.byteLength), 0, read)
  }

  /**
   * The item's events from `from` on (each kept in `read`, for a whole answer); at a refused one,
   * what went before it is kept for the ending. The loop captures nothing: no closure and no scope
   * an event (the refusal and the wait for a growth are methods of their own).
   */
  private walk(
    item: Uint8Array,
    buf: Buffer,
    from: number,
    read: ReadEvents | null,
  ): boolean | Promise<boolean> {
    for (let at = from; at < buf.length; ) {
      // One search a common event: its first line feed, followed by another, is its end.
      const eol = buf.indexOf(LF, at)
      const singleLine = eol !== -1 && buf[eol + 1] === LF
      const blank = singleLine || eol === -1 ? eol : buf.indexOf(BLANK, eol)
      const end = blank === -1 ? buf.length : blank + 2
      const chunk = eventChunk(buf, at, end, singleLine)
      // Not one JSON value: nothing counted, so the relay must drop it (the assembly skips it).
      if (chunk === false) markUnreadable(item, at)
      // Counted and decided by the translated path's gate: the same count, growth and cut.
      const ok = chunk === null || chunk === false ? true : this.chunks.admit(chunk)
      // The assembly's: the chunk, unless an error or an `event:` line are to be judged there.
      const kept = chunk && chunk.error == null && buf[at] === DATA_LINE[0] ? chunk : at
      if (ok === true) {
        read?.push(kept)
        at = end
        continue
      }
      if (ok === false) return this.refused(item, at, read)
      return this.grown(ok, item, buf, at, end, kept, read)
    }
    return true
  }

  /** Refused at the event at `at`: the item before it is relayed ahead of the ending. */
  private refused(item: Uint8Array, at: number, read: ReadEvents | null): false {
    this.before = at > 0 ? item.subarray(0, at) : null
    if (this.before) keepMarks(item, this.before)
    if (this.before && read) parsed.set(this.before, read)
    return false
  }

  /** The event at `at` waits for the reservation to grow; then the walk goes on from `end`. */
  private grown(
    ok: Promise<boolean>,
    item: Uint8Array,
    buf: Buffer,
    at: number,
    end: number,
    kept: ChatCompletionChunk | number,
    read: ReadEvents | null,
  ): Promise<boolean> {
    return ok.then((yes) => {
      if (!yes) return this.refused(item, at, read)
      read?.push(kept)
      return this.walk(item, buf, end, read)
    })
  }

  ending(): Uint8Array[] {
    const out: Uint8Array[] = this.chunks.ending().map((c) => utf8.encode(`data: ${JSON.stringify(c)}\n\n`))
    out.push(DONE_EVENT)
    if (this.before !== null) out.unshift(this.before)
    this.before = null
    return out
  }
}

/**
 * The chat completion from the stream's events as the gate let them through (its ending
 * included), refused as the translated stream refuses it (`OpenAIChunkDecoder`: an error event, a
 * chunk without choices, an end before `[DONE]` or a finish; an event that is not JSON skipped)
 * and assembled as `completeWithin` assembles it, with the client's model id. The events the gate
 * read are not read again: their chunks are taken as it parsed them (`parsed`).
 */
export function assembleChat(
  items: Uint8Array[],
  ctx: EncodeContext<unknown>,
): { body: string; usage: Usage | null } {
  const label = ctx.provider.prefix
  const answer = new Assembly()
  let done = false
  let finished = false
  let chunks = 0
  let skipped = 0
  const add = (chunk: ChatCompletionChunk) => {
    for (const c of chunk.choices) if (c?.finish_reason) finished = true
    chunks++
    answer.add(chunk)
  }
  /** An event the gate did not parse for the assembly, read as the decoder reads it. */
  const judge = (buf: Buffer, start: number, end: number) => {
    const data = eventData(buf, start, end)
    if (data === '') return
    if (data === '[DONE]') {
      done = true
      return
    }
    let obj: unknown
    try {
      obj = JSON.parse(data)
    } catch {
      skipped++
      return
    }
    if (obj === null || typeof obj !== 'object')
      throw invalidResponse(label, 'a stream event is not a JSON object')
    const chunk = obj as Record<string, unknown>
    if (eventName(buf, start) === 'error' || chunk.error != null) throw eventError(label, chunk)
    if (!Array.isArray(chunk.choices)) throw invalidResponse(label, 'a stream chunk has no choices array')
    add(chunk as unknown as ChatCompletionChunk)
  }
  const endOf = (buf: Buffer, start: number) => {
    const blank = buf.indexOf(BLANK, start)
    return blank === -1 ? buf.length : blank + 2
  }
  // After [DONE] nothing counts, as the decoder reads it.
  for (let i = 0; i < items.length && !done; i++) {
    const item = items[i]!
    const buf = Buffer.from(item.buffer, item.byteOffset, item.byteLength)
    const read = parsed.get(item)
    if (read === undefined) {
      // Not read by the gate (the ending it wrote): event by event.
      for (let at = 0; at < buf.length && !done; ) {
        const end = endOf(buf, at)
        judge(buf, at, end)
        at = end
      }
      continue
    }
    for (let k = 0; k < read.length && !done; k++) {
      const e = read[k]!
      if (typeof e === 'number') judge(buf, e, endOf(buf, e))
      else add(e)
    }
  }
  if (!done && !finished) {
    if (skipped > 0 && chunks === 0) throw invalidResponse(label, 'no stream event was JSON')
    throw streamInterrupted(label, 'the stream ended before data: [DONE]')
  }
  const completion = answer.completion()
  completion.model = ctx.modelId
  return { body: JSON.stringify(completion), usage: completion.usage ?? null }
}
