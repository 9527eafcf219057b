/**
 * @module
 * The chat → openai stream relay at the byte level: the upstream's body chunks are framed into
 * events by `ByteRelay`, and an event in the shape OpenAI writes — one compact `data: {…}` line,
 * `model` before `choices`, `"usage":null` last or no `usage` — is edited in place as bytes: its
 * `model` value swapped for the client's id, and its `,"usage":null` cut when the client did not
 * ask for usage. Nothing is decoded, parsed or encoded for it, and a read's edited events are
 * copied once into one buffer: each `Buffer` search or `subarray` is a call into native code (and
 * a `subarray` an object), so the common event takes a handful of searches in one view of itself
 * (which bounds them) and no piece objects, its choices read by one loop over their bytes. Every
 * other event (the usage chunk, an error, an escaped model name, a pretty-printed or reordered
 * chunk, `event:` lines) is decoded and handed to `ChatRelay`, the text relay that holds the rules
 * (`relay-stream.ts`), so the two routes write the same bytes.
 *
 * The relay runs as the stream plan's stage (`ChatBytes.stage`), inside the writer's read, so a
 * failure in the first event is still an HTTP error (the status is held until the first item);
 * later failures are relayed in-band, as the text relay frames them.
 *
 * @example
 * const relay = new ChatBytes('openai/gpt-4o', false, 32 << 20, 'openai')
 * const plan = { body: upstream.body, stages: [relay.stage], ctx }   // the writer's source
 * writeStream(plan, relay, opts)                                        // relay: the encoder
 */

import type { Usage } from '../../operations/chat.ts'
import type { StreamEncoder } from '../../pipeline/stream/encoder.ts'
import { streamInterrupted } from '../../providers/upstream-errors.ts'
import { GatewayError } from '../../util/errors.ts'
import { ByteRelay, closingQuote, eventData, eventName, startsWith, valueAt } from '../byte-relay.ts'
import { ChatRelay, quotedModel, readUsage, sse } from './relay-stream.ts'
import { DONE, KEEPALIVE } from './stream-encoder.ts'

const DATA_OBJECT = Buffer.from('data: {')
const DONE_EVENT = Buffer.from('data: [DONE]\n\n')
const MODEL = Buffer.from('"model":"')
const CHOICES = Buffer.from('"choices":[')
const USAGE = Buffer.from('"usage":')
const USAGE_NULL = Buffer.from(',"usage":null}')
const CLOSE_EVENT = Buffer.from('}\n\n')
const BLANK = Buffer.from('\n\n')
/** The key only: the value may follow spaces (`"finish_reason": "stop"` is as complete as compact). */
const FINISH_KEY = Buffer.from('"finish_reason"')
/**
 * Where generated text sits: `content` (and `reasoning_content`), `reasoning`, `refusal`, a tool
 * call's `name` and `arguments` — as the text relay's scan counts them (relayedBytes).
 */
const TEXT_FIELDS = ['content', 'reasoning', 'refusal', 'name', 'arguments'].map((k) => Buffer.from(k))
const LF = 10
const QUOTE = 34
const BACKSLASH = 92
const CLOSE_BRACE = 125
const OPEN_BRACE = 123
const CLOSE_BRACKET = 93
const COLON = 58
const F = 102

/** A read's output: `[from, to)` ranges of the read (two numbers) and other bytes, in order. */
type Part = number | Uint8Array
const EDITED = 1
const DROPPED = 0
const NOT_COMMON = -1

/** The relay's framing and editing; the writer drives it as a plan stage (`ChatBytes.stage`). */
class ChatByteRelay extends ByteRelay implements Transformer<Uint8Array, Uint8Array> {
  readonly keepalive = KEEPALIVE
  /** The text relay: the rules for every event the byte path does not take. */
  readonly text: ChatRelay
  private readonly model: Buffer
  sawDone = false
  sawFinish = false
  relayed = 0
  /** Some event reached the client: a failure from now on is relayed in-band. */
  private started = false
  failed: GatewayError | null = null
  /** Usage read on the byte path (the text relay keeps what it reads itself). */
  seen: Usage | null = null

  constructor(
    modelId: string,
    private readonly includeUsage: boolean,
    maxEventBytes: number,
    label: string,
    private readonly clean: (err: GatewayError) => GatewayError,
  ) {
    super(maxEventBytes, label)
    this.text = new ChatRelay(modelId, includeUsage, label)
    this.model = quotedModel(modelId).bytes
  }

  transform(chunk: Uint8Array, controller: TransformStreamDefaultController<Uint8Array>): void {
    const out = this.encode(chunk)
    if (out !== null) controller.enqueue(out)
  }

  /**
   * The read's events: the common ones edited as they are copied (`edit`), the rest through
   * `event`; all of it written once into one buffer. Nothing edited: the read as it came.
   */
  protected override relayEvents(buf: Buffer, last: number): Uint8Array | null {
    // Byte by byte through a plain Uint8Array view: a Buffer's element reads cost about twice as much.
    const u8 = new Uint8Array(buf.buffer, buf.byteOffset, last)
    const parts: Part[] = []
    let size = 0
    let changed = false
    /** Start of the run of events kept as they came, not yet in `parts`. */
    let kept = 0
    for (let start = 0; start < last; ) {
      const end = buf.indexOf(BLANK, start) + 2
      if (end - start > this.maxEventBytes) throw this.tooLarge()
      const at = parts.length
      if (kept < start) parts.push(kept, start)
      // Done, failed, or an event its gate could not parse (malformed: dropped and counted).
      let edited =
        this.sawDone || this.failed !== null || this.dropped(start)
          ? DROPPED
          : this.edit(buf, u8, start, end, parts)
      if (edited === EDITED) this.started = true
      else if (edited === NOT_COMMON) {
        const action = this.event(buf, start, end)
        edited = action === undefined ? NOT_COMMON : EDITED
        if (action) parts.push(action)
      }
      if (edited === NOT_COMMON) {
        parts.length = at // kept as it came: the run goes on
      } else {
        changed = true
        kept = end
      }
      start = end
    }
    if (!changed) return buf.subarray(0, last)
    if (kept < last) parts.push(kept, last)
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!
      if (typeof p === 'number') size += (parts[++i] as number) - p
      else size += p.byteLength
    }
    if (size === 0) return null
    const out = Buffer.allocUnsafeSlow(size)
    let to = 0
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!
      if (typeof p === 'number') to += buf.copy(out, to, p, parts[++i] as number)
      else {
        out.set(p, to)
        to += p.byteLength
      }
    }
    return out
  }

  /**
   * An event not in the common shape: decoded and handed to the text relay. One piece or none
   * (`EventAction` also allows a list of pieces, which `relayEvents` does not take).
   */
  protected event(buf: Buffer, start: number, end: number): Uint8Array | null | undefined {
    if (this.sawDone || this.failed !== null) return null
    if (end - start === DONE_EVENT.length && startsWith(buf, start, DONE_EVENT)) {
      this.sawDone = true
      return null
    }
    const data = eventData(buf, start, end)
    if (data === '') return null
    if (data === '[DONE]') {
      this.sawDone = true
      return null
    }
    let out: string | null
    try {
      out = this.text.edit({ event: eventName(buf, start), data })
    } catch (err) {
      // Nothing sent yet: the failure becomes the HTTP status (the writer still holds it).
      if (!this.started || !(err instanceof GatewayError)) throw err
      // Later: the events before it in this read still go out, then the error frame, then nothing.
      // The upstream's words lose its key and address, as a refusal's do (the writer never sees them).
      this.failed = this.clean(err)
      return this.error(this.failed)
    }
    if (out === null) return null
    this.started = true
    return Buffer.from(sse(out))
  }

  /**
   * The event `buf[start, end)` edited into `parts` (its ranges around the new model id): EDITED,
   * DROPPED (withheld), or NOT_COMMON when it is not in the common shape (nothing added). A chunk
   * is recognised by `data: {` … `}`, one line, a plain `model` string before `choices`: an
   * upstream error (`{"error": …}`, as OpenAI and vLLM send it) has neither, and goes to the text
   * relay, which refuses it. Every search is bounded to the event (`ev`, its bytes before the blank
   * line): a read of many chunks that lack a key costs each event its own length, not the read's.
   */
  private edit(buf: Buffer, u8: Uint8Array, start: number, end: number, parts: Part[]): number {
    const last = end - 2 // the blank line's first LF
    if (!startsWith(u8, start, DATA_OBJECT) || u8[last - 1] !== CLOSE_BRACE) return NOT_COMMON
    // The blank line's LF ends this search within the event.
    if (buf.indexOf(LF, start) < last) return NOT_COMMON
    // One view of the event for the searches (its indexes are relative to `start`).
    const ev = buf.subarray(start, last)
    const m = ev.indexOf(MODEL)
    if (m === -1) return NOT_COMMON
    const value = start + m + MODEL.length
    const q = ev.indexOf(QUOTE, value - start)
    if (q === -1) return NOT_COMMON
    const close = start + q
    for (let i = value; i < close; i++) if (u8[i] === BACKSLASH) return NOT_COMMON
    const c = ev.indexOf(CHOICES, close - start)
    if (c === -1) return NOT_COMMON
    const choices = start + c
    const nullUsageAt = last - USAGE_NULL.length
    const nullUsage = nullUsageAt >= start && startsWith(u8, nullUsageAt, USAGE_NULL)
    if (!nullUsage) {
      const usage = start + ev.lastIndexOf(USAGE)
      // The usage chunk as OpenAI ends a stream: `"choices":[]`, then the usage object last.
      if (
        usage > choices &&
        u8[choices + CHOICES.length] === CLOSE_BRACKET &&
        u8[usage + USAGE.length] === OPEN_BRACE
      ) {
        this.seen = readUsage(buf.toString('utf8', usage + USAGE.length, last - 1))
        if (!this.includeUsage) return DROPPED
        parts.push(start, value - 1, this.model, close + 1, end)
        return EDITED
      }
      // A usage value elsewhere, or none where the client wants `"usage":null`: the text relay.
      if (this.includeUsage || usage > choices) return NOT_COMMON
    }
    this.readChoices(buf, u8, choices, last)
    parts.push(start, value - 1, this.model)
    if (nullUsage && !this.includeUsage) parts.push(close + 1, nullUsageAt, CLOSE_EVENT)
    else parts.push(close + 1, end)
    return EDITED
  }

  /**
   * One loop over a chunk's bytes from `choices` to `last`: whether some choice has a non-null
   * `finish_reason` (the key, optional JSON whitespace, the colon, a value that is not `null`),
   * and the bytes of generated text as written (a string value after a key ending in a text
   * field's name; an escape counts its own bytes, never fewer than the UTF-8 bytes it stands
   * for, so this bounds the decoded text's bytes from above). A raw `":"` never occurs inside a
   * JSON string (its last quote would close the string), so every one is a key's end.
   */
  private readChoices(buf: Buffer, u8: Uint8Array, from: number, last: number): void {
    let n = 0
    for (let i = from; i < last; i++) {
      if (u8[i] !== QUOTE) continue
      if (u8[i + 1] === F && !this.sawFinish && startsWith(u8, i, FINISH_KEY)) {
        const v = valueAt(u8, i + FINISH_KEY.length, last)
        if (v !== -1 && u8[v] !== N) this.sawFinish = true
      }
      if (u8[i + 1] !== COLON || u8[i + 2] !== QUOTE || i + 2 >= last) continue
      for (const field of TEXT_FIELDS) {
        if (i - field.length < from || !startsWith(u8, i - field.length, field)) continue
        const close = closingQuote(buf, i + 3, last)
        if (close !== -1) n += close - (i + 3)
        break
      }
    }
    this.relayed += n
  }

  end(): Uint8Array | null {
    if (this.failed !== null) return null
    // Some compatible servers omit [DONE]; an answer that reached its finish_reason is complete.
    if (!this.sawDone && !this.sawFinish && !this.text.finished()) {
      if (this.relayed === 0) return this.text.end() // its words for a stream of nothing readable
      throw streamInterrupted(this.label, 'the stream ended before data: [DONE]')
    }
    return DONE
  }

  error(err: GatewayError): Uint8Array {
    return this.text.error(err)
  }

  usage(): Usage | null {
    return this.seen ?? this.text.usage()
  }
}

/**
 * The writer's encoder for a chat pass-through stream: the bytes come out of the plan's stage
 * (`stage`) already relayed, so `encode` passes them on; the rest is the relay's.
 */
export class ChatBytes implements StreamEncoder<Uint8Array> {
  readonly stage: ChatByteRelay
  readonly keepalive = KEEPALIVE

  /**
   * `clean`: what the upstream's own words lose before the client reads them (`scrubbed`).
   * `framed`: the plan yields the upstream's complete events, a read's at a time (`eventFrames`,
   * for the cut at the output allowance), and `encode` relays them; else the stage relayed them
   * and `encode` passes its bytes on.
   */
  constructor(
    modelId: string,
    includeUsage: boolean,
    maxEventBytes: number,
    label: string,
    clean: (err: GatewayError) => GatewayError = (err) => err,
    private readonly framed = false,
  ) {
    this.stage = new ChatByteRelay(modelId, includeUsage, maxEventBytes, label, clean)
  }

  encode(bytes: Uint8Array): Uint8Array | null {
    return this.framed ? this.stage.encode(bytes) : bytes
  }

  end(): Uint8Array | null {
    return this.stage.end()
  }

  error(err: GatewayError): Uint8Array {
    return this.stage.error(err)
  }

  usage(): Usage | null {
    return this.stage.usage()
  }

  failure(): GatewayError | null {
    return this.stage.failed
  }

  relayedBytes(): number {
    return this.stage.relayed + this.stage.text.relayedBytes()
  }

  malformed(): number {
    return this.stage.malformed() + this.stage.text.malformed()
  }
}

const N = 110
