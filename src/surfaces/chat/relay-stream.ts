/**
 * @module
 * The chat → openai stream relay: each upstream event reaches the client as the upstream wrote it,
 * with only these edits — the same output the decode → `ChatChunkEncoder` route gives, without a
 * JSON.parse / JSON.stringify per event (`ChunkScan` finds the spans):
 *
 * - the top-level `model` value → the client's id (appended when the upstream sent none);
 * - the client did not ask for usage (`stream_options.include_usage`; the gateway always asks the
 *   upstream): the final `choices: []` chunk that carries usage is withheld, and every other
 *   chunk's top-level `usage` field (OpenAI's `"usage":null`) is cut — OpenAI sends no `usage` key
 *   then. The client asked: `usage` stays, and `"usage":null` is added where the upstream sent none;
 * - `data: [DONE]` is written once, at the end; anything after the upstream's [DONE] is dropped.
 *
 * Usage is read from whichever chunk carries a non-null `usage` (only that value is parsed).
 * Failures, as `OpenAIChunkDecoder` has them: an `error` event or a top-level non-null `error` →
 * 502 `upstream_error` (only that event is parsed, for its message); a chunk with no `choices`
 * array → 502 `upstream_invalid_response` — each sent as the gateway's
 * error frame in the event's place, the relay ending there (`encodeText`); the body ending before
 * [DONE] without any `finish_reason` → 502 `upstream_stream_interrupted` (thrown by `end`). An
 * event that is not one JSON object is skipped and counted, never relayed (DESIGN §10).
 *
 * @example
 * const relay = new ChatRelay('openai/gpt-4o', false, 'openai')
 * relay.encode({ data: '{"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":null}' })
 * // data: {"model":"openai/gpt-4o","choices":[{"index":0,"delta":{"content":"Hi"}}]}
 */

import type { Usage } from '../../operations/chat.ts'
import type { StreamEncoder } from '../../pipeline/stream/encoder.ts'
import { invalidResponse, streamInterrupted } from '../../providers/http.ts'
import { eventError } from '../../providers/openai/stream.ts'
import type { SSEEvent } from '../../providers/sse/index.ts'
import { GatewayError } from '../../util/errors.ts'
import { setBounded } from '../../util/map.ts'
import { ChunkScan } from './scan-chunk.ts'
import { DONE, KEEPALIVE } from './stream-encoder.ts'

const bytes = new TextEncoder()

/** Model ids kept quoted (`quotedModel`), at most this many, of at most `QUOTED_ID_MAX` characters. */
const QUOTED_MAX = 512
const QUOTED_ID_MAX = 200
const quoted = new Map<string, { text: string; bytes: Buffer }>()

/**
 * The client's model id as JSON text and as its bytes, which a stream's relay writes over the
 * upstream's `model`: made once an id, not twice a stream (ids are the catalogue's, few; a longer
 * one, as a pattern route may take from a client, is made each time and not kept). The bytes are
 * shared: read, never written.
 */
export function quotedModel(modelId: string): { text: string; bytes: Buffer } {
  const kept = quoted.get(modelId)
  if (kept !== undefined) return kept
  const text = JSON.stringify(modelId)
  const made = { text, bytes: Buffer.from(text) }
  if (modelId.length > QUOTED_ID_MAX) return made
  setBounded(quoted, modelId, made, QUOTED_MAX)
  return made
}

export class ChatRelay implements StreamEncoder<SSEEvent> {
  readonly keepalive = KEEPALIVE
  private readonly scan = new ChunkScan()
  private readonly quotedModel: string
  private seen: Usage | null = null
  private relayed = 0
  private sawDone = false
  private sawFinish = false
  private failed: GatewayError | null = null
  /** Events that were not JSON: skipped, never relayed (an SDK would throw on them), counted. */
  private skipped = 0

  /**
   * @param modelId the client's id (`prefix/model`), written over the upstream's `model`.
   * @param includeUsage the client asked for the usage chunk.
   * @param label the provider's prefix, for error messages.
   */
  constructor(
    modelId: string,
    private readonly includeUsage: boolean,
    private readonly label: string,
  ) {
    this.quotedModel = quotedModel(modelId).text
  }

  encode(ev: SSEEvent): Uint8Array | null {
    const out = this.encodeText(ev)
    return out === null ? null : bytes.encode(out)
  }

  /**
   * The event's frame, or null to send nothing for it. A failed event becomes the gateway's error
   * frame and ends the relay: what follows it is dropped, `end` adds no [DONE], and `failure`
   * reports it. (Not thrown: the writer joins a read's frames, and a throw would lose the ones
   * before the failure, which the client must get.)
   */
  encodeText(ev: SSEEvent): string | null {
    const data = ev.data
    if (this.failed !== null || this.sawDone || data === '') return null
    if (data === '[DONE]') {
      this.sawDone = true
      return null
    }
    let edited: string | null
    try {
      edited = this.edit(ev)
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err
      this.failed = err
      return sse(JSON.stringify(err.toBody()))
    }
    return edited === null ? null : sse(edited)
  }

  /** The event's new text, or null to withhold it. Throws the stream's failure. */
  edit(ev: SSEEvent): string | null {
    const data = ev.data
    const scan = this.scan
    scan.read(data)
    if (ev.event === 'error' || scan.error) throw eventError(this.label, parseObject(data))
    if (!scan.ok) {
      this.skipped++
      return null
    }
    if (scan.choices === -1) throw invalidResponse(this.label, 'a stream chunk has no choices array')
    if (scan.finish) this.sawFinish = true
    this.relayed += scan.bytes
    const hasUsage = scan.usageStart !== -1 && !scan.usageNull
    if (hasUsage) this.seen = readUsage(data.slice(scan.usageStart, scan.usageEnd))
    if (!this.includeUsage && hasUsage && scan.choices === 0) return null
    const cutUsage = !this.includeUsage && scan.usageStart !== -1
    const m0 = scan.modelStart
    // The common shape in one concatenation: model before usage, usage cut or kept, nothing added.
    if (m0 !== -1 && (this.includeUsage ? scan.usageStart !== -1 : !cutUsage || scan.usageCutStart > m0)) {
      const tail = cutUsage
        ? data.slice(scan.modelEnd, scan.usageCutStart) + data.slice(scan.usageCutEnd)
        : data.slice(scan.modelEnd)
      return data.slice(0, m0) + this.quotedModel + tail
    }
    // Edits from the end backwards, so that earlier offsets stay valid: the closing brace is last.
    let out = data
    let tail = m0 === -1 ? `,"model":${this.quotedModel}` : ''
    if (this.includeUsage && scan.usageStart === -1) tail += ',"usage":null'
    if (tail) out = out.slice(0, scan.close) + tail + out.slice(scan.close)
    if (cutUsage && scan.usageCutStart > m0) out = cut(out, scan.usageCutStart, scan.usageCutEnd)
    if (m0 !== -1) out = out.slice(0, m0) + this.quotedModel + out.slice(scan.modelEnd)
    if (cutUsage && scan.usageCutStart < m0) out = cut(out, scan.usageCutStart, scan.usageCutEnd)
    return out
  }

  /** `data: [DONE]`; throws when the upstream stopped before it without finishing the answer. */
  end(): Uint8Array | null {
    if (this.failed !== null) return null
    // Some compatible servers omit [DONE]; an answer that reached its finish_reason is complete.
    if (!this.sawDone && !this.sawFinish) {
      // Nothing but events we could not read: the upstream does not speak the protocol.
      if (this.skipped > 0 && this.relayed === 0)
        throw invalidResponse(this.label, 'no stream event was a JSON object')
      throw streamInterrupted(this.label, 'the stream ended before data: [DONE]')
    }
    return DONE
  }

  /** Malformed events skipped so far. */
  malformed(): number {
    return this.skipped
  }

  error(err: GatewayError): Uint8Array {
    return bytes.encode(sse(JSON.stringify(err.toBody())))
  }

  usage(): Usage | null {
    return this.seen
  }

  failure(): GatewayError | null {
    return this.failed
  }

  /** Some relayed chunk carried a non-null `finish_reason` (read structurally, any spacing). */
  finished(): boolean {
    return this.sawFinish
  }

  relayedBytes(): number {
    return this.relayed
  }
}

const cut = (s: string, from: number, to: number): string => s.slice(0, from) + s.slice(to)

/** One SSE event. A multi-line `data` (a pretty-printed upstream) keeps one `data:` line per line. */
export function sse(data: string): string {
  if (data.indexOf('\n') === -1) return `data: ${data}\n\n`
  return `data: ${data.replaceAll('\n', '\ndata: ')}\n\n`
}

export function readUsage(text: string): Usage | null {
  try {
    const usage = JSON.parse(text) as Usage | null
    return usage !== null && typeof usage === 'object' ? usage : null
  } catch {
    return null
  }
}

function parseObject(data: string): Record<string, unknown> {
  try {
    const v = JSON.parse(data)
    return v !== null && typeof v === 'object' ? v : {}
  } catch {
    return {}
  }
}
