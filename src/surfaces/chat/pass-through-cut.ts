/**
 * @module
 * The cut at the output allowance (DESIGN §11) on the chat → openai pass-through: under a token or
 * money limit the answer keeps its byte relay (relay-bytes.ts) and this gate counts it. Each
 * upstream event (one Uint8Array, `eventFrames`) is read for its choices' generated text only, and
 * counted by the translated path's own gate (`ChunkGate`, pipeline/output-cut.ts: the same count,
 * carried whitespace, growth and cut). Every event it lets through goes on as the upstream wrote
 * it (the relay swaps only `model`, and withholds the usage chunk a client did not ask for). At
 * the cut, the ending is written as upstream events — a chunk per open choice with
 * `finish_reason: "length"`, the usage chunk (the input as reserved, the output as counted),
 * `[DONE]` — and goes through the same relay, so the client reads what the translated path wrote.
 *
 * Cheap on the common shape (`scanChoice`): a one-line `data: {…}` chunk with one choice, no tool
 * calls and no logprobs is read off its bytes — the text fields' values only, decoded without a
 * JSON.parse unless they hold an escape. Every other event (several choices, tool calls, the
 * usage chunk, `event:` lines, errors) is parsed, as the translated path parses all of them.
 *
 * A JSON request under a limit is sent upstream as a stream (`streamedChatBody`) and the events,
 * as the gate let them through, put together as the chat completion (`assembleChat`): the same
 * assembly, checks and body as the translated path's (`completeWithin`), without its canonical
 * request, its adapter, or a parse of every event.
 *
 * @example
 * const gate = new ChatCutGate(allowance, reservation.tokens - reservation.outputTokens)
 * writeStream({ body, stages: [eventFrames(max, label)], ctx }, relay, { gate })
 */
import type { ChatCompletionChunk, Usage } from '../../operations/chat.ts'
import type { OutputAllowance } from '../../pipeline/output-allowance.ts'
import { Assembly, ChunkGate, choiceText } from '../../pipeline/output-cut.ts'
import type { CutGate } from '../../pipeline/stream/types.ts'
import type { EncodeContext } from '../../pipeline/surface.ts'
import { invalidResponse, streamInterrupted } from '../../providers/http.ts'
import { eventError } from '../../providers/openai/stream.ts'
import { eventData, eventName } from '../byte-relay.ts'

const utf8 = new TextEncoder()
const DONE_EVENT = utf8.encode('data: [DONE]\n\n')
/** The delta's text fields, in `choiceText`'s order (tool calls never take this path). */
const TEXT_KEYS = ['content', 'refusal', 'reasoning_content', 'reasoning'] as const
const QUOTE = 34
const BACKSLASH = 92
const OPEN_BRACKET = 91
const CLOSE_BRACE = 125
const OPEN_BRACE = 123
const COMMA = 44
const N = 110
const ZERO = 48
const NINE = 57

/** One choice's delta as `scanChoice` read it off the bytes. */
export interface ScannedChoice {
  index: number
  delta: Partial<Record<(typeof TEXT_KEYS)[number], string>>
  /** The finish reason, or null while the choice goes on. */
  finish: string | null
}

/**
 * The one choice of an event (its blank line included) in the common shape —
 * one `data: {…}` line, a `choices` array with a single `index` key in it (no second choice, no
 * tool call), `logprobs` null or absent — read off its bytes; null for any other event, which the
 * caller parses. `s` is the event as latin1 (a character a byte), its bytes `buf` from `offset`;
 * `s` is searched with the engine's string `indexOf`, cheaper a call than a Buffer's (and every
 * search ends with the event). A quote-led key cannot match inside a JSON string (a quote there
 * is escaped).
 */
export function scanChoice(buf: Buffer, s: string, offset = 0): ScannedChoice | null {
  const last = s.length - 2 // the blank line's first LF
  if (last < 8 || s.charCodeAt(last - 1) !== CLOSE_BRACE || !s.startsWith('data: {')) return null
  if (s.indexOf('\n') !== last) return null
  const c = s.indexOf('"choices"')
  if (c === -1) return null
  const open = valueAt(s, c + 9, last)
  if (open === -1 || s.charCodeAt(open) !== OPEN_BRACKET) return null
  const i = s.indexOf('"index"', open)
  // No choice (the usage chunk), or more than one choice or a tool call: parsed.
  if (i === -1 || s.indexOf('"index"', i + 1) !== -1) return null
  let at = valueAt(s, i + 7, last)
  if (at === -1 || !digit(s.charCodeAt(at))) return null
  let index = 0
  for (; digit(s.charCodeAt(at)); at++) index = index * 10 + s.charCodeAt(at) - ZERO
  const lp = s.indexOf('"logprobs"', open)
  if (lp !== -1) {
    const v = valueAt(s, lp + 10, last)
    if (v === -1 || s.charCodeAt(v) !== N) return null
  }
  let finish: string | null = null
  const f = s.indexOf('"finish_reason"', open)
  if (f !== -1) {
    const v = valueAt(s, f + 15, last)
    if (v === -1) return null
    if (s.charCodeAt(v) === QUOTE) {
      const r = stringAt(buf, offset, s, v, last)
      if (r === null) return null
      finish = r
    } else if (s.charCodeAt(v) !== N) return null
  }
  const delta = scanDelta(buf, offset, s, open, last)
  if (delta === null) return null
  return { index, delta, finish }
}

const digit = (c: number) => c >= ZERO && c <= NINE

const TEXT_KEY_SET: ReadonlySet<string> = new Set(TEXT_KEYS)

/**
 * The choice's `delta` object walked key by key (one pass, no search per field): its text
 * fields' strings kept, other strings and scalars skipped; an object or array in it (tool calls,
 * audio), a key with an escape or anything unexpected → null (parsed instead). No `delta`: empty.
 */
function scanDelta(
  buf: Buffer,
  offset: number,
  s: string,
  from: number,
  last: number,
): ScannedChoice['delta'] | null {
  const delta: ScannedChoice['delta'] = {}
  const d = s.indexOf('"delta"', from)
  if (d === -1) return delta
  let p = valueAt(s, d + 7, last)
  if (p === -1 || s.charCodeAt(p) !== OPEN_BRACE) return null
  p = skipSpace(s, p + 1, last)
  if (s.charCodeAt(p) === CLOSE_BRACE) return delta
  for (;;) {
    if (s.charCodeAt(p) !== QUOTE) return null
    const keyEnd = s.indexOf('"', p + 1)
    if (keyEnd === -1 || keyEnd >= last) return null
    const key = s.slice(p + 1, keyEnd)
    if (key.includes('\\')) return null
    const v = valueAt(s, keyEnd + 1, last)
    if (v === -1) return null
    const c = s.charCodeAt(v)
    let next: number
    if (c === QUOTE) {
      const close = closingQuote(s, v, last)
      if (close === -1) return null
      if (TEXT_KEY_SET.has(key)) delta[key as (typeof TEXT_KEYS)[number]] = decoded(buf, offset, s, v, close)
      next = close + 1
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) return null
    else {
      // null, true, false or a number: up to the next separator.
      next = v
      while (next < last && s.charCodeAt(next) !== COMMA && s.charCodeAt(next) !== CLOSE_BRACE) next++
    }
    p = skipSpace(s, next, last)
    const sep = s.charCodeAt(p)
    if (sep === CLOSE_BRACE) return delta
    if (sep !== COMMA) return null
    p = skipSpace(s, p + 1, last)
  }
}

function skipSpace(s: string, i: number, end: number): number {
  while (i < end && isSpace(s.charCodeAt(i))) i++
  return i
}

/** Past JSON whitespace, the colon and JSON whitespace after a key ending at `keyEnd`; -1 when no colon follows. */
function valueAt(s: string, keyEnd: number, end: number): number {
  let i = keyEnd
  while (i < end && isSpace(s.charCodeAt(i))) i++
  if (i >= end || s.charCodeAt(i) !== 58) return -1
  i++
  while (i < end && isSpace(s.charCodeAt(i))) i++
  return i < end ? i : -1
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13

/** The quote closing the JSON string opened at `q` (after an even run of backslashes), before `end`; -1 if none. */
function closingQuote(s: string, q: number, end: number): number {
  for (let close = s.indexOf('"', q + 1); close !== -1 && close < end; close = s.indexOf('"', close + 1)) {
    let b = close - 1
    while (b > q && s.charCodeAt(b) === BACKSLASH) b--
    if ((close - 1 - b) % 2 === 0) return close
  }
  return -1
}

/** The string `s[q, close]` (quotes included) decoded from its bytes: JSON.parse only when it holds an escape. */
function decoded(buf: Buffer, offset: number, s: string, q: number, close: number): string {
  const slash = s.indexOf('\\', q + 1)
  if (slash !== -1 && slash < close)
    return JSON.parse(buf.toString('utf8', offset + q, offset + close + 1)) as string
  return buf.toString('utf8', offset + q + 1, offset + close)
}

/** The JSON string whose opening quote is at `q`, decoded; null if unclosed. */
function stringAt(buf: Buffer, offset: number, s: string, q: number, end: number): string | null {
  const close = closingQuote(s, q, end)
  return close === -1 ? null : decoded(buf, offset, s, q, close)
}

/** Events the gate read whole (a JSON answer's, gated one by one), for the assembly to reuse. */
const scans = new WeakMap<Uint8Array, ScannedChoice>()

const scannedText = (d: ScannedChoice['delta']): string =>
  (d.content ?? '') + (d.refusal ?? '') + (d.reasoning_content ?? '') + (d.reasoning ?? '')

/** The chunk an event carries, parsed, or null (no JSON object with a `choices` array: the relay's to judge). */
function parseChunk(buf: Buffer): ChatCompletionChunk | null {
  const data = eventData(buf, 0, buf.length)
  // Not a chunk: [DONE], an empty event, a comment.
  if (data.charCodeAt(0) !== 123) return null
  try {
    const chunk = JSON.parse(data) as unknown
    if (chunk === null || typeof chunk !== 'object') return null
    return Array.isArray((chunk as { choices?: unknown }).choices) ? (chunk as ChatCompletionChunk) : null
  } catch {
    return null
  }
}

/**
 * Its items are batches of complete events (`eventFrames(…, batch)`: a read's events), or single
 * events (a JSON answer's); refused at an event, its ending starts with the events of the batch
 * before it, so the relay gets them as it would have.
 */
export class ChatCutGate implements CutGate<Uint8Array> {
  private readonly chunks: ChunkGate
  /** The last chunk relayed (its event's bytes until the ending needs its id, created and model). */
  private head: { bytes: Buffer } | { chunk: ChatCompletionChunk } | null = null
  /** The batch refused, up to the event refused: relayed ahead of the ending. */
  private before: Uint8Array | null = null
  /** The item being admitted: a single event's scan is kept for `assembleChat` (`scans`). */
  private batch: Uint8Array | null = null

  constructor(
    private readonly allowance: OutputAllowance,
    inputTokens: number,
  ) {
    this.chunks = new ChunkGate(allowance, inputTokens)
  }

  get cut(): boolean {
    return this.chunks.cut
  }

  get counted(): number {
    return this.chunks.counted
  }

  admit(batch: Uint8Array): boolean | Promise<boolean> {
    const buf = Buffer.from(batch.buffer, batch.byteOffset, batch.byteLength)
    this.batch = batch
    return this.walk(buf, buf.toString('latin1'), 0)
  }

  /** The batch's events from `from` on; at a refused one, what went before it is kept for the ending. */
  private walk(buf: Buffer, s: string, from: number): boolean | Promise<boolean> {
    for (let at = from; at < s.length; ) {
      const blank = s.indexOf('\n\n', at)
      const end = blank === -1 ? s.length : blank + 2
      const ok = this.event(buf, s, at, end)
      if (ok === true) {
        at = end
        continue
      }
      const refused = () => {
        this.before = at > 0 ? buf.subarray(0, at) : null
        return false
      }
      if (ok === false) return refused()
      return ok.then((yes) => (yes ? this.walk(buf, s, end) : refused()))
    }
    return true
  }

  private event(buf: Buffer, s: string, start: number, end: number): boolean | Promise<boolean> {
    // Asked before the event's own text is counted: may more follow what was relayed so far?
    const before = this.allowance.counted
    const c = scanChoice(buf, s.substring(start, end), start)
    // A JSON answer's events are gated one by one, then assembled: read once.
    if (c !== null && start === 0 && end === s.length) scans.set(this.batch!, c)
    if (c !== null) {
      const finished = !!c.finish
      const grew = this.chunks.count(c.index, scannedText(c.delta), finished)
      return this.chunks.decide(before, grew, () => {
        this.chunks.relayedChoice(c.index, finished)
        this.head = { bytes: buf.subarray(start, end) }
      })
    }
    const chunk = parseChunk(buf.subarray(start, end))
    if (chunk === null) return true
    let grew = false
    for (const ch of chunk.choices)
      if (this.chunks.count(ch.index, choiceText(ch), !!ch.finish_reason)) grew = true
    return this.chunks.decide(before, grew, () => {
      for (const ch of chunk.choices) this.chunks.relayedChoice(ch.index, !!ch.finish_reason)
      this.head = { chunk }
    })
  }

  ending(): Uint8Array[] {
    const h = this.head
    const head = h === null ? null : 'chunk' in h ? h.chunk : parseChunk(h.bytes)
    const out: Uint8Array[] = this.chunks
      .ending(head)
      .map((c) => utf8.encode(`data: ${JSON.stringify(c)}\n\n`))
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
 * and assembled as `completeWithin` assembles it, with the client's model id. The first chunk is
 * parsed whole (the answer's id, model and fingerprint); after it, one in the common shape is
 * read off its bytes (`scanChoice`).
 */
export function assembleChat(
  events: Uint8Array[],
  ctx: EncodeContext<unknown>,
): { body: string; usage: Usage | null } {
  const label = ctx.provider.prefix
  const answer = new Assembly()
  let done = false
  let finished = false
  let chunks = 0
  let skipped = 0
  for (const ev of events) {
    // After [DONE] nothing counts, as the decoder reads it.
    if (done) break
    const buf = Buffer.from(ev.buffer, ev.byteOffset, ev.byteLength)
    const c = answer.started ? (scans.get(ev) ?? scanChoice(buf, buf.toString('latin1'))) : null
    if (c !== null) {
      if (c.finish) finished = true
      chunks++
      const choice = { index: c.index, delta: c.delta, finish_reason: c.finish }
      answer.add({ choices: [choice] } as unknown as ChatCompletionChunk)
      continue
    }
    const data = eventData(buf, 0, buf.length)
    if (data === '') continue
    if (data === '[DONE]') {
      done = true
      continue
    }
    let obj: unknown
    try {
      obj = JSON.parse(data)
    } catch {
      skipped++
      continue
    }
    if (obj === null || typeof obj !== 'object')
      throw invalidResponse(label, 'a stream event is not a JSON object')
    const chunk = obj as Record<string, unknown>
    if (eventName(buf, 0) === 'error' || chunk.error != null) throw eventError(label, chunk)
    if (!Array.isArray(chunk.choices)) throw invalidResponse(label, 'a stream chunk has no choices array')
    for (const c of chunk.choices) if (c?.finish_reason) finished = true
    chunks++
    answer.add(chunk as unknown as ChatCompletionChunk)
  }
  if (!done && !finished) {
    if (skipped > 0 && chunks === 0) throw invalidResponse(label, 'no stream event was JSON')
    throw streamInterrupted(label, 'the stream ended before data: [DONE]')
  }
  const completion = answer.completion()
  completion.model = ctx.modelId
  return { body: JSON.stringify(completion), usage: completion.usage ?? null }
}
