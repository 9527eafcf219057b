/**
 * @module
 * Pass-through to an OpenAI provider with `wire: responses`: the upstream speaks this surface's
 * wire, so its answer reaches the client byte for byte except the `model` of each response object,
 * which becomes the gateway's id (edited in place, `json/fields.ts`). Only the lifecycle events
 * that carry a response object are parsed; usage is read from the terminal one
 * (`response.completed`, `.incomplete` or `.failed`), in chat terms for the usage record.
 *
 * @example
 * const relay = new ResponsesRelay('openai/gpt-5', 'openai')
 * for await (const chunk of upstream.body) client.write(relay.encode(chunk))
 * relay.usage() // { prompt_tokens: 12, completion_tokens: 2, ... }
 */

import { replaceStringField } from '../../json/fields.ts'
import { DEFAULT_MAX_RESPONSE_BYTES } from '../../providers/body-limit.ts'
import { invalidResponse, streamInterrupted } from '../../providers/http.ts'
import { encodeSSE } from '../../providers/sse/index.ts'
import type { Usage } from '../../providers/types.ts'
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
import { frameEvents, type ResponsesEvent } from './stream-encoder.ts'

const LIFECYCLE = new Set([
  'response.created',
  'response.in_progress',
  'response.queued',
  'response.completed',
  'response.incomplete',
  'response.failed',
])
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed'])

const bytes = new TextEncoder()
const KEEPALIVE = bytes.encode(': keep-alive\n\n')
const DONE_DATA = Buffer.from('data: [DONE]')
const DATA_TYPE = Buffer.from('data: {"type":"')
const DELTA = '.delta'
const DELTA_KEY = Buffer.from('"delta"')

export class ResponsesRelay extends ByteRelay {
  readonly keepalive = KEEPALIVE
  /** OpenAI's own failure events (`error`, `response.failed`) reach the client as they came, status 200. */
  readonly holdForContent = false
  private seen: Usage | null = null
  private last: Record<string, unknown> | null = null
  private done = false
  private failed: GatewayError | null = null
  private relayed = 0
  /** The last event relayed (by range): its `sequence_number` numbers the events the gateway adds. */
  private lastBuf: Buffer | null = null
  private lastStart = 0
  private lastEnd = 0

  constructor(
    private readonly modelId: string,
    label: string,
    maxEventBytes = DEFAULT_MAX_RESPONSE_BYTES,
  ) {
    super(maxEventBytes, label)
  }

  protected event(buf: Buffer, start: number, end: number): EventAction {
    if (this.done || startsWith(buf, start, DONE_DATA)) return null
    const name = eventName(buf, start)
    const type = name ?? dataType(buf, start)
    this.lastBuf = buf
    this.lastStart = start
    this.lastEnd = end
    if (type === undefined) return undefined
    // Generated text (output text, reasoning, refusals, tool arguments) comes in `*.delta` events.
    if (type.endsWith(DELTA)) this.relayed += stringValueBytes(buf, start, end, DELTA_KEY)
    if (!LIFECYCLE.has(type)) return undefined
    const data = eventData(buf, start, end)
    this.lifecycle(type, data)
    return bytes.encode(encodeSSE(replaceStringField(data, 2, 'model', this.modelId), name))
  }

  /** A stream that stopped before its terminal event was cut: the client is told as OpenAI would. */
  end(): Uint8Array | null {
    if (this.done) return null
    return this.error(streamInterrupted(this.label, 'the stream ended before response.completed'))
  }

  error(err: GatewayError): Uint8Array {
    this.failed = err
    this.done = true
    let seq = 0
    if (this.lastBuf !== null) seq = nextSequence(eventData(this.lastBuf, this.lastStart, this.lastEnd), 0)
    const failed = {
      ...(this.last ?? { object: 'response', output: [] }),
      model: this.modelId,
      status: 'failed',
      error: { code: 'server_error', message: err.message },
    }
    const events: ResponsesEvent[] = [
      { type: 'error', code: err.code, message: err.message, param: err.param, sequence_number: seq++ },
      { type: 'response.failed', response: failed, sequence_number: seq++ },
    ]
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
    if (type === 'response.failed') this.failed = upstreamFailure(this.label, parsed.response)
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

function upstreamFailure(label: string, response: Record<string, unknown> | undefined): GatewayError {
  const error = response?.error as { message?: unknown; code?: unknown } | undefined
  const detail = typeof error?.message === 'string' ? error.message : 'no details given'
  return new GatewayError(502, 'upstream_error', `Upstream '${label}' failed mid-stream: ${detail}`)
}
