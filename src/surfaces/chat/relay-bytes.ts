/**
 * @module
 * The chat → openai stream relay at the byte level: the upstream's body chunks are framed into
 * events by `ByteRelay`, and an event in the shape OpenAI writes — one compact `data: {…}` line,
 * `model` before `choices`, `"usage":null` last or no `usage` — is edited in place as bytes: its
 * `model` value swapped for the client's id, and its `,"usage":null` cut when the client did not
 * ask for usage. Nothing is decoded, parsed or encoded for it. Every other event (the usage chunk,
 * an error, an escaped model name, a pretty-printed or reordered chunk, `event:` lines) is decoded
 * and handed to `ChatRelay`, the text relay that holds the rules (`relay-stream.ts`), so the two
 * routes write the same bytes.
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
import {
  ByteRelay,
  closingQuote,
  type EventAction,
  eventData,
  eventName,
  startsWith,
  valueAt,
} from '../byte-relay.ts'
import { ChatRelay, readUsage, sse } from './relay-stream.ts'
import { DONE, KEEPALIVE } from './stream-encoder.ts'

const DATA_OBJECT = Buffer.from('data: {')
const DONE_EVENT = Buffer.from('data: [DONE]\n\n')
const MODEL = Buffer.from('"model":"')
const CHOICES = Buffer.from('"choices":[')
const USAGE = Buffer.from('"usage":')
const USAGE_NULL = Buffer.from(',"usage":null}')
const CLOSE_EVENT = Buffer.from('}\n\n')
/** The key only: the value may follow spaces (`"finish_reason": "stop"` is as complete as compact). */
const FINISH_KEY = Buffer.from('"finish_reason"')
/**
 * Where generated text sits: `content` (and `reasoning_content`), `reasoning`, `refusal`, a tool
 * call's `name` and `arguments` — as the text relay's scan counts them (relayedBytes).
 */
const TEXT_FIELDS = ['content', 'reasoning', 'refusal', 'name', 'arguments'].map((k) =>
  Buffer.from(`${k}":"`),
)
const LF = 10
const QUOTE = 34
const BACKSLASH = 92
const CLOSE_BRACE = 125
const OPEN_BRACE = 123
const CLOSE_BRACKET = 93

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
    this.model = Buffer.from(JSON.stringify(modelId))
  }

  transform(chunk: Uint8Array, controller: TransformStreamDefaultController<Uint8Array>): void {
    const out = this.encode(chunk)
    if (out !== null) controller.enqueue(out)
  }

  protected event(buf: Buffer, start: number, end: number): EventAction {
    if (this.sawDone || this.failed !== null) return null
    if (end - start === DONE_EVENT.length && startsWith(buf, start, DONE_EVENT)) {
      this.sawDone = true
      return null
    }
    const fast = this.edit(buf, start, end)
    if (fast !== undefined) {
      if (fast !== null) this.started = true
      return fast
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
   * The event edited as bytes (pieces of it around the new model id); null to withhold it;
   * undefined when it is not in the common shape. A chunk is recognised by `data: {` … `}`,
   * one line, a plain `model` string before `choices`: an upstream error (`{"error": …}`, as
   * OpenAI and vLLM send it) has neither, and goes to the text relay, which refuses it.
   */
  private edit(buf: Buffer, start: number, end: number): EventAction {
    const last = end - 2 // the blank line's first LF
    if (!startsWith(buf, start, DATA_OBJECT) || buf[last - 1] !== CLOSE_BRACE) return undefined
    const ev = buf.subarray(start, last)
    if (ev.indexOf(LF) !== -1) return undefined
    const m = ev.indexOf(MODEL)
    if (m === -1) return undefined
    const value = m + MODEL.length
    const close = ev.indexOf(QUOTE, value)
    if (close === -1) return undefined
    for (let i = value; i < close; i++) if (ev[i] === BACKSLASH) return undefined
    const choices = ev.indexOf(CHOICES, close)
    if (choices === -1) return undefined
    const nullUsageAt = ev.length - USAGE_NULL.length
    const nullUsage = startsWith(ev, nullUsageAt, USAGE_NULL)
    if (!nullUsage) {
      const usage = ev.lastIndexOf(USAGE)
      // The usage chunk as OpenAI ends a stream: `"choices":[]`, then the usage object last.
      if (
        usage > choices &&
        ev[choices + CHOICES.length] === CLOSE_BRACKET &&
        ev[usage + USAGE.length] === OPEN_BRACE
      ) {
        this.seen = readUsage(buf.toString('utf8', start + usage + USAGE.length, start + ev.length - 1))
        if (!this.includeUsage) return null
        return [
          buf.subarray(start, start + m + MODEL.length - 1),
          this.model,
          buf.subarray(start + close + 1, end),
        ]
      }
      // A usage value elsewhere, or none where the client wants `"usage":null`: the text relay.
      if (this.includeUsage || usage > choices) return undefined
    }
    if (hasFinish(ev, choices)) this.sawFinish = true
    this.relayed += textBytes(ev, choices)
    const head = buf.subarray(start, start + m + MODEL.length - 1)
    if (nullUsage && !this.includeUsage)
      return [head, this.model, buf.subarray(start + close + 1, start + nullUsageAt), CLOSE_EVENT]
    return [head, this.model, buf.subarray(start + close + 1, end)]
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
    return this.stage.text.malformed()
  }
}

const N = 110

/**
 * Some choice has a non-null `finish_reason`: the key, optional JSON whitespace, the colon, and a
 * value that is not `null`. One `indexOf` per occurrence, as the compact-only search had. The key
 * cannot match inside a string value: a quote there is escaped, so `n"` never occurs in one.
 */
function hasFinish(ev: Buffer, from: number): boolean {
  for (let at = ev.indexOf(FINISH_KEY, from); at !== -1; at = ev.indexOf(FINISH_KEY, at + 1)) {
    const i = valueAt(ev, at + FINISH_KEY.length, ev.length)
    if (i !== -1 && ev[i] !== N) return true
  }
  return false
}

/**
 * Bytes of generated text in a chunk's choices, as written: an escape counts its own bytes, never
 * fewer than the UTF-8 bytes it stands for, so this bounds the decoded text's bytes from above.
 */
function textBytes(ev: Buffer, from: number): number {
  let n = 0
  for (const field of TEXT_FIELDS) {
    for (let at = ev.indexOf(field, from); at !== -1; at = ev.indexOf(field, at + 1)) {
      const value = at + field.length
      const close = closingQuote(ev, value, ev.length)
      if (close === -1) break
      n += close - value
    }
  }
  return n
}
