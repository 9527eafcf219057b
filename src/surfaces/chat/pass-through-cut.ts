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
import type { OutputAllowance } from '../../pipeline/output-allowance.ts'
import { Assembly, ChunkGate, choiceText } from '../../pipeline/output-cut.ts'
import type { CutGate } from '../../pipeline/stream-writer.ts'
import type { EncodeContext } from '../../pipeline/surface.ts'
import { invalidResponse, streamInterrupted } from '../../providers/http.ts'
import { eventError } from '../../providers/openai/stream.ts'
import type { ChatCompletionChunk, Usage } from '../../providers/types.ts'
import { closingQuote, eventData, eventName, startsWith, valueAt } from '../byte-relay.ts'

const utf8 = new TextEncoder()
const DONE_EVENT = utf8.encode('data: [DONE]\n\n')
const DATA_OBJECT = Buffer.from('data: {')
const CHOICES = Buffer.from('"choices"')
const INDEX = Buffer.from('"index"')
const FINISH = Buffer.from('"finish_reason"')
const LOGPROBS = Buffer.from('"logprobs"')
/** The delta's text fields, in `choiceText`'s order (tool calls never take this path). */
const TEXT_KEYS = ['content', 'refusal', 'reasoning_content', 'reasoning'] as const
const TEXT_KEY_BYTES = TEXT_KEYS.map((k) => Buffer.from(`"${k}"`))
const LF = 10
const QUOTE = 34
const BACKSLASH = 92
const OPEN_BRACKET = 91
const CLOSE_BRACE = 125
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
 * The one choice of a chunk in the common shape — one `data: {…}` line, a `choices` array with
 * a single `index` key in it (no second choice, no tool call), `logprobs` null or absent — read
 * off its bytes; null for any other event, which the caller parses. A quote-led key cannot match
 * inside a JSON string (a quote there is escaped).
 */
export function scanChoice(buf: Buffer): ScannedChoice | null {
  const end = buf.length - 2 // the blank line's first LF
  if (end < 8 || buf[end] !== LF || buf[end - 1] !== CLOSE_BRACE || !startsWith(buf, 0, DATA_OBJECT))
    return null
  if (buf.indexOf(LF) !== end) return null
  const c = buf.indexOf(CHOICES)
  if (c === -1) return null
  const open = valueAt(buf, c + CHOICES.length, end)
  if (open === -1 || buf[open] !== OPEN_BRACKET) return null
  const i = buf.indexOf(INDEX, open)
  // No choice (the usage chunk), or more than one choice or a tool call: parsed.
  if (i === -1 || buf.indexOf(INDEX, i + 1) !== -1) return null
  let at = valueAt(buf, i + INDEX.length, end)
  if (at === -1 || buf[at]! < ZERO || buf[at]! > NINE) return null
  let index = 0
  for (; buf[at]! >= ZERO && buf[at]! <= NINE; at++) index = index * 10 + buf[at]! - ZERO
  const lp = buf.indexOf(LOGPROBS, open)
  if (lp !== -1) {
    const v = valueAt(buf, lp + LOGPROBS.length, end)
    if (v === -1 || buf[v] !== N) return null
  }
  let finish: string | null = null
  const f = buf.indexOf(FINISH, open)
  if (f !== -1) {
    const v = valueAt(buf, f + FINISH.length, end)
    if (v === -1) return null
    if (buf[v] === QUOTE) {
      const s = stringAt(buf, v, end)
      if (s === null) return null
      finish = s
    } else if (buf[v] !== N) return null
  }
  const delta: ScannedChoice['delta'] = {}
  for (let k = 0; k < TEXT_KEYS.length; k++) {
    const key = TEXT_KEY_BYTES[k]!
    for (let a = buf.indexOf(key, open); a !== -1 && a < end; a = buf.indexOf(key, a + 1)) {
      const v = valueAt(buf, a + key.length, end)
      // Not a string (null, or `content` of something else): the next occurrence, if any.
      if (v === -1 || buf[v] !== QUOTE) continue
      const s = stringAt(buf, v, end)
      if (s === null) return null
      delta[TEXT_KEYS[k]!] = s
      break
    }
  }
  return { index, delta, finish }
}

/** The JSON string whose opening quote is at `q`, decoded (JSON.parse only when it holds an escape); null if unclosed. */
function stringAt(buf: Buffer, q: number, end: number): string | null {
  const close = closingQuote(buf, q + 1, end)
  if (close === -1) return null
  const escaped = buf.indexOf(BACKSLASH, q + 1)
  if (escaped !== -1 && escaped < close) return JSON.parse(buf.toString('utf8', q, close + 1)) as string
  return buf.toString('utf8', q + 1, close)
}

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

export class ChatCutGate implements CutGate<Uint8Array> {
  private readonly chunks: ChunkGate
  /** The last chunk relayed (its bytes until the ending needs its id, created and model). */
  private head: Buffer | ChatCompletionChunk | null = null

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

  admit(ev: Uint8Array): boolean | Promise<boolean> {
    const buf = Buffer.from(ev.buffer, ev.byteOffset, ev.byteLength)
    // Asked before the event's own text is counted: may more follow what was relayed so far?
    const before = this.allowance.counted
    const s = scanChoice(buf)
    if (s !== null) {
      const finished = !!s.finish
      const grew = this.chunks.count(s.index, scannedText(s.delta), finished)
      return this.chunks.decide(before, grew, () => {
        this.chunks.relayedChoice(s.index, finished)
        this.head = buf
      })
    }
    const chunk = parseChunk(buf)
    if (chunk === null) return true
    let grew = false
    for (const c of chunk.choices)
      if (this.chunks.count(c.index, choiceText(c), !!c.finish_reason)) grew = true
    return this.chunks.decide(before, grew, () => {
      for (const c of chunk.choices) this.chunks.relayedChoice(c.index, !!c.finish_reason)
      this.head = chunk
    })
  }

  ending(): Uint8Array[] {
    const head = this.head instanceof Buffer ? parseChunk(this.head) : this.head
    const out = this.chunks.ending(head).map((c) => utf8.encode(`data: ${JSON.stringify(c)}\n\n`))
    out.push(DONE_EVENT)
    return out
  }
}

/**
 * A non-stream forward body asking for a stream with the usage chunk (the gateway settles from
 * it). `stream_options` was removed from the non-stream body (forward-request.ts).
 */
export function streamedChatBody(body: string): string {
  return JSON.stringify({
    ...(JSON.parse(body) as Record<string, unknown>),
    stream: true,
    stream_options: { include_usage: true },
  })
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
    const s = answer.started ? scanChoice(buf) : null
    if (s !== null) {
      if (s.finish) finished = true
      chunks++
      const choice = { index: s.index, delta: s.delta, finish_reason: s.finish }
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
