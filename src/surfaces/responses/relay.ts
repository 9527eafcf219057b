/**
 * @module
 * Pass-through to an OpenAI provider with `wire: responses`: the upstream speaks this surface's
 * wire, so its answer reaches the client byte for byte except the `model` of each response object,
 * which becomes the gateway's id (edited in place, `json/fields.ts`). Only the lifecycle events
 * that carry a response object are parsed; usage is read from the terminal one
 * (`response.completed`, `.incomplete` or `.failed`), in chat terms for the usage record.
 *
 * As on every stream, the writer holds the status and the events until the first one that
 * carries content (`contentStarted`, `carriesContent`), so an upstream failing before it — an
 * `error` event, `response.failed`, a cut, a stall — is a failed attempt the client sees nothing
 * of: retried or failed over, else an HTTP error (DESIGN §10). Its `error` is classified by its
 * code, as the same code in an error status would be. After content the upstream's failure events
 * reach the client as they came (without the provider's key and address), but an `error` that is
 * not JSON: the relay ends the stream in its place as it ends a cut one, with its own `error` and
 * `response.failed` numbered after the last event relayed.
 *
 * @example
 * const relay = new ResponsesRelay('openai/gpt-5', 'openai')
 * for await (const chunk of upstream.body) client.write(relay.encode(chunk))
 * relay.usage() // { prompt_tokens: 12, completion_tokens: 2, ... }
 */

import { replaceStringField } from '../../json/fields.ts'
import type { Usage } from '../../operations/chat.ts'
import type { EncodeContext } from '../../pipeline/surface.ts'
import { DEFAULT_MAX_RESPONSE_BYTES, maxResponseBytes } from '../../providers/body-limit.ts'
import { factsOf, withFacts } from '../../providers/failure-facts.ts'
import {
  describeUpstreamError,
  inBandError,
  invalidResponse,
  streamInterrupted,
} from '../../providers/http.ts'
import { scrubbedEventData } from '../../providers/scrub.ts'
import { encodeSSE, isJson } from '../../providers/sse/index.ts'
import { GatewayError } from '../../util/errors.ts'
import {
  ByteRelay,
  type EventAction,
  eventData,
  eventName,
  startsWith,
  stringValueBytes,
} from '../byte-relay.ts'
import { chatUsage } from './response-object.ts'
import { errorEventFields, frameEvents, type ResponsesEvent } from './stream-encoder.ts'

const LIFECYCLE = new Set([
  'response.created',
  'response.in_progress',
  'response.queued',
  'response.completed',
  'response.incomplete',
  'response.failed',
])
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed'])
/**
 * Events that carry none of the answer: the response opening (`response.created`,
 * `.in_progress`, `.queued`), an output item or part opened empty (`*.added`), a hosted tool's
 * progress (`response.web_search_call.searching`, `….generating`, `….interpreting`).
 */
const OPENING = /\.(created|in_progress|queued|added|searching|generating|interpreting)$/

const bytes = new TextEncoder()
const KEEPALIVE = bytes.encode(': keep-alive\n\n')
const DONE_DATA = Buffer.from('data: [DONE]')
const DATA_TYPE = Buffer.from('data: {"type":"')
const DELTA = '.delta'
const DELTA_KEY = Buffer.from('"delta"')

/** The relay of one stream for the client of `ctx`: its model id, its provider's event bound. */
export function responsesRelay(ctx: EncodeContext<unknown>): ResponsesRelay {
  return new ResponsesRelay(
    ctx.modelId,
    ctx.modelId.split('/')[0]!,
    maxResponseBytes(ctx.provider),
    ctx.provider,
  )
}

export class ResponsesRelay extends ByteRelay {
  readonly keepalive = KEEPALIVE
  private seen: Usage | null = null
  private last: Record<string, unknown> | null = null
  private done = false
  private failed: GatewayError | null = null
  private relayed = 0
  /** An event that carries content has been relayed (see `carriesContent`). */
  private content = false
  /** The last event relayed (by range): its `sequence_number` numbers the events the gateway adds. */
  private lastBuf: Buffer | null = null
  private lastStart = 0
  private lastEnd = 0

  constructor(
    private readonly modelId: string,
    label: string,
    maxEventBytes = DEFAULT_MAX_RESPONSE_BYTES,
    /** Whose key and address the upstream's failure events lose before they are relayed. */
    private readonly provider: { api_key?: string; base_url?: string } = {},
  ) {
    super(maxEventBytes, label)
  }

  protected event(buf: Buffer, start: number, end: number): EventAction {
    if (this.done || startsWith(buf, start, DONE_DATA)) return null
    const name = eventName(buf, start)
    const type = name ?? dataType(buf, start)
    if (type === 'error' && !this.content) {
      // This attempt's failure, never relayed: the writer, still holding the status, hands it to
      // the attempt loop (had the hold run out, it ends the stream with `error()`'s events).
      this.failed = upstreamFailure(this.label, errorFields(eventData(buf, start, end)))
      this.done = true
      return null
    }
    if (type === 'error') {
      const data = eventData(buf, start, end)
      // An `error` that is not JSON is no event a client can read (and has no `sequence_number`):
      // the relay ends the stream as it ends a cut one, with its own `error` and `response.failed`.
      if (!isJson(data)) return this.error(unreadableFailure(this.label))
      this.relaying(buf, start, end)
      // The upstream failed, whatever follows: a client that stops reading at this event (the
      // OpenAI SDKs throw on it) leaves a failed attempt, recorded and judged as one, not a 499.
      this.failed ??= upstreamFailure(this.label, errorFields(data))
      // After content the upstream's `error` goes on as it came, but for the provider's key and address.
      return this.scrubbed(data, name)
    }
    this.relaying(buf, start, end)
    if (type === undefined) return undefined
    // Generated text (output text, reasoning, refusals, tool arguments) comes in `*.delta` events.
    if (type.endsWith(DELTA)) {
      const text = stringValueBytes(buf, start, end, DELTA_KEY)
      this.relayed += text
      if (text > 0) this.content = true
      return undefined
    }
    if (!LIFECYCLE.has(type)) {
      this.content ||= carriesContent(type)
      return undefined
    }
    const data = eventData(buf, start, end)
    this.lifecycle(type, data)
    // A failure before content is this attempt's, like an `error` event above: never relayed. The
    // writer reports it once — as an HTTP error while it holds the status, else with `error()`'s
    // events — not the upstream's `response.failed` and then its own beside it.
    if (type === 'response.failed' && !this.content) return null
    const relayed = replaceStringField(data, 2, 'model', this.modelId)
    if (type === 'response.failed')
      return this.scrubbed(relayed, name) ?? bytes.encode(encodeSSE(relayed, name))
    return bytes.encode(encodeSSE(relayed, name))
  }

  /** Remembers the event as the last one relayed: the events the relay adds are numbered after it. */
  private relaying(buf: Buffer, start: number, end: number): void {
    this.lastBuf = buf
    this.lastStart = start
    this.lastEnd = end
  }

  /**
   * A failure event (`error`, `response.failed`: JSON, already parsed) without the provider's key
   * or address; undefined (as it came) when it names neither.
   */
  private scrubbed(data: string, name: string | undefined): Uint8Array | undefined {
    // Both callers parsed the data, and `scrubbedEventData` falls back only on data that is not
    // JSON; were it reached, the throw ends the stream with `error()`'s events, never an `error`
    // body in place of the terminal event.
    const clean = scrubbedEventData(data, this.provider, () => {
      throw invalidResponse(this.label, `a ${name ?? 'failure'} event is not JSON`)
    })
    return clean === null ? undefined : bytes.encode(encodeSSE(clean, name))
  }

  /**
   * A stream that stopped before its terminal event was cut: the client is told as OpenAI would.
   * After the upstream's own `error` event (the writer lets the upstream go at it), only the
   * `response.failed` the upstream would have sent after it.
   */
  end(): Uint8Array | null {
    if (this.done) return null
    if (this.failed) return this.failedEvents(this.failed, false)
    return this.error(streamInterrupted(this.label, 'the stream ended before response.completed'))
  }

  error(err: GatewayError): Uint8Array {
    this.failed = err
    return this.failedEvents(err, true)
  }

  /** `error` (when `withError`) and `response.failed`, numbered after the last event relayed. */
  private failedEvents(err: GatewayError, withError: boolean): Uint8Array {
    this.done = true
    let seq = 0
    if (this.lastBuf !== null) seq = nextSequence(eventData(this.lastBuf, this.lastStart, this.lastEnd), 0)
    const code = withError ? 'server_error' : (factsOf(err)?.code ?? 'server_error')
    const failed = {
      ...(this.last ?? { object: 'response', output: [] }),
      model: this.modelId,
      status: 'failed',
      error: { code, message: err.message },
    }
    const events: ResponsesEvent[] = []
    if (withError) events.push({ ...errorEventFields(err), sequence_number: seq++ })
    events.push({ type: 'response.failed', response: failed, sequence_number: seq++ })
    return frameEvents(events)
  }

  usage(): Usage | null {
    return this.seen
  }

  failure(): GatewayError | null {
    return this.failed
  }

  relayedBytes(): number {
    return this.relayed
  }

  contentStarted(): boolean {
    return this.content
  }

  private lifecycle(type: string, data: string): void {
    let parsed: { response?: Record<string, unknown> }
    try {
      parsed = JSON.parse(data)
    } catch {
      throw invalidResponse(this.label, `a ${type} event is not JSON`)
    }
    if (parsed.response) this.last = parsed.response
    if (!TERMINAL.has(type)) return
    this.done = true
    this.seen = chatUsage(parsed.response?.usage as Parameters<typeof chatUsage>[0])
    // A finished answer, even an empty one, is the answer: the hold ends with it.
    if (type !== 'response.failed') this.content = true
    else this.failed ??= upstreamFailure(this.label, parsed.response?.error)
  }
}

/** `type` of an event sent without an `event:` line (the field comes first in OpenAI's JSON). */
function dataType(buf: Buffer, start: number): string | undefined {
  if (startsWith(buf, start, DATA_TYPE)) {
    const from = start + DATA_TYPE.length
    return buf.toString('latin1', from, buf.indexOf(34, from))
  }
  return eventType(eventData(buf, start, buf.indexOf('\n\n', start)))
}

/** A whole (non-stream) upstream response: its bytes with `model` replaced, and its usage. */
export function relayResponseJson(
  text: string,
  modelId: string,
  label: string,
): { body: string; usage: Usage | null } {
  let json: { object?: unknown; usage?: unknown } | null = null
  try {
    json = JSON.parse(text)
  } catch {}
  if (json?.object !== 'response') throw invalidResponse(label, 'the body is not a response object')
  return {
    body: replaceStringField(text, 1, 'model', modelId),
    usage: chatUsage(json.usage as Parameters<typeof chatUsage>[0]),
  }
}

/** `type` of an event sent without an `event:` line (the field comes first in OpenAI's JSON). */
function eventType(data: string): string | undefined {
  return /^\{\s*"type"\s*:\s*"([^"]+)"/.exec(data)?.[1]
}

/** One past the event's `sequence_number` (it is the last field in OpenAI's JSON), or `fallback`. */
function nextSequence(data: string, fallback: number): number {
  const at = data.lastIndexOf('"sequence_number":')
  if (at === -1) return fallback
  const n = Number.parseInt(data.slice(at + 18), 10)
  return Number.isFinite(n) ? n + 1 : fallback
}

/**
 * Whether an event other than a delta or a lifecycle event carries content: any `response.*` event
 * but an opening (`OPENING`) — a finished part or item (`*.done`: text, arguments, a reasoning
 * item, a hosted tool's result), a partial image, and event types the gateway does not know, which
 * are relayed rather than held.
 */
function carriesContent(type: string): boolean {
  return type.startsWith('response.') && !OPENING.test(type)
}

/** An upstream `error` event after content whose data is not JSON: its words are not relayed (they may name the key). */
function unreadableFailure(label: string): GatewayError {
  return new GatewayError(
    502,
    'upstream_error',
    `Upstream '${label}' failed mid-stream: it sent an error event that is not JSON.`,
  )
}

/** An `error` event's fields: nested under `error` as OpenAI streams them, or beside `type` as its reference shows. */
export function errorFields(data: string): unknown {
  let body: unknown
  try {
    body = JSON.parse(data)
  } catch {
    return null
  }
  const nested = (body as { error?: unknown } | null)?.error
  return nested !== null && typeof nested === 'object' ? nested : body
}

/**
 * The upstream's own failure (an `error` event, or `response.failed`'s `error`) as chat
 * pass-through reports one (`inBandError`: 502 with its words; `insufficient_quota` a billing
 * error), carrying its code for the attempt loop, which classifies it as it would the same code in
 * an error status (`insufficient_quota`: a credential failure, the key rests).
 */
export function upstreamFailure(label: string, error: unknown): GatewayError {
  const e = (error !== null && typeof error === 'object' ? error : {}) as Record<string, unknown>
  const message = typeof e.message === 'string' ? e.message : 'no details given'
  // OpenAI's code, else its type (the event's own `type` is `error`, which says nothing).
  const code = [e.code, e.type].find((c): c is string => typeof c === 'string' && c !== 'error') ?? null
  const err = inBandError(
    label,
    describeUpstreamError({ error: { message } }) ?? message,
    code,
    ' mid-stream',
  )
  return withFacts(err, { code, message })
}
