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
 * Each event is parsed once (`JSON.parse` of its data: measured cheaper under Bun's engine than
 * reading the text fields off the bytes by hand, which this file did until 2026-11-29 — 1.5–2 ×
 * the parse's CPU on the bench's events), the common one-line `data: {…}` event straight off its
 * bytes. Its choices' text is counted as the translated path counts it (`choiceText`).
 *
 * A JSON request under a limit is sent upstream as a stream (`streamedChatBody`) and the events,
 * as the gate let them through, put together as the chat completion (`assembleChat`): the same
 * assembly, checks and body as the translated path's (`completeWithin`), without its canonical
 * request and its adapter; each event parsed once, by the gate.
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
import { eventData, eventName, startsWith } from '../byte-relay.ts'

const utf8 = new TextEncoder()
const DONE_EVENT = utf8.encode('data: [DONE]\n\n')
const LF = 10
const OPEN_BRACE = 123
/** `data: ` */
const DATA_PREFIX = 6
const DATA_LINE = Buffer.from('data: ')
const BLANK = Buffer.from('\n\n')

/** Events the gate read whole (a JSON answer's, gated one by one), parsed, for the assembly to reuse. */
const parsed = new WeakMap<Uint8Array, ChatCompletionChunk>()

/**
 * The chunk an event carries, parsed, or null (no JSON object with a `choices` array: the relay's
 * to judge). The common event — one `data: {…}` line — is parsed off its bytes as it is; any other
 * (`event:` lines, data split over lines) has its data lines joined first (`eventData`).
 */
function parseChunk(buf: Buffer, start = 0, end = buf.length): ChatCompletionChunk | null {
  const oneLine =
    end - start > DATA_PREFIX + 2 &&
    buf[start + DATA_PREFIX] === OPEN_BRACE &&
    buf.indexOf(LF, start) === end - 2 &&
    buf[end - 1] === LF &&
    startsWith(buf, start, DATA_LINE)
  const data = oneLine ? buf.toString('utf8', start + DATA_PREFIX, end - 2) : eventData(buf, start, end)
  // Not a chunk: [DONE], an empty event, a comment.
  if (data.charCodeAt(0) !== OPEN_BRACE) return null
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
  /** The last chunk relayed: the ending carries its id, created and model. */
  private head: ChatCompletionChunk | null = null
  /** The batch refused, up to the event refused: relayed ahead of the ending. */
  private before: Uint8Array | null = null
  /** The item being admitted: a single event's chunk is kept for `assembleChat` (`parsed`). */
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
    this.batch = batch
    return this.walk(Buffer.from(batch.buffer, batch.byteOffset, batch.byteLength), 0)
  }

  /** The batch's events from `from` on; at a refused one, what went before it is kept for the ending. */
  private walk(buf: Buffer, from: number): boolean | Promise<boolean> {
    for (let at = from; at < buf.length; ) {
      const blank = buf.indexOf(BLANK, at)
      const end = blank === -1 ? buf.length : blank + 2
      const ok = this.event(buf, at, end)
      if (ok === true) {
        at = end
        continue
      }
      const refused = () => {
        this.before = at > 0 ? buf.subarray(0, at) : null
        return false
      }
      if (ok === false) return refused()
      return ok.then((yes) => (yes ? this.walk(buf, end) : refused()))
    }
    return true
  }

  private event(buf: Buffer, start: number, end: number): boolean | Promise<boolean> {
    // Asked before the event's own text is counted: may more follow what was relayed so far?
    const before = this.allowance.counted
    const chunk = parseChunk(buf, start, end)
    if (chunk === null) return true
    // A JSON answer's events are gated one by one, then assembled: parsed once.
    if (start === 0 && end === buf.length) parsed.set(this.batch!, chunk)
    let grew = false
    for (const ch of chunk.choices)
      if (this.chunks.count(ch.index, choiceText(ch), !!ch.finish_reason)) grew = true
    return this.chunks.decide(before, grew, () => {
      for (const ch of chunk.choices) this.chunks.relayedChoice(ch.index, !!ch.finish_reason)
      this.head = chunk
    })
  }

  ending(): Uint8Array[] {
    const out: Uint8Array[] = this.chunks
      .ending(this.head)
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
 * and assembled as `completeWithin` assembles it, with the client's model id. An event the gate
 * admitted alone was parsed there (`parsed`) and is not parsed again.
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
    // The gate parsed it (one data line: no `event:` name to look at); an error in it is refused below.
    const gated = parsed.get(ev)
    if (gated !== undefined && gated.error == null && buf[0] === DATA_LINE[0]) {
      for (const c of gated.choices) if (c?.finish_reason) finished = true
      chunks++
      answer.add(gated)
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
