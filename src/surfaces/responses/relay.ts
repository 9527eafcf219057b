/**
 * @module
 * Pass-through to an OpenAI provider with `wire: responses`: the upstream speaks this surface's
 * wire, so its answer reaches the client byte for byte except the `model` of each response object,
 * which becomes the gateway's id (edited in place, `util/json-fields.ts`). Only the lifecycle events
 * that carry a response object are parsed; usage is read from the terminal one
 * (`response.completed`, `.incomplete` or `.failed`), in chat terms for the usage record.
 *
 * @example
 * const relay = new ResponsesRelay('openai/gpt-5', 'openai')
 * for await (const ev of parseSSE(upstream.body)) client.write(relay.encode(ev))
 * relay.usage() // { prompt_tokens: 12, completion_tokens: 2, ... }
 */
import type { RawEvent, StreamEncoder } from '../../pipeline/index.ts'
import { invalidResponse, streamInterrupted } from '../../providers/http.ts'
import { encodeSSE } from '../../providers/sse/index.ts'
import type { Usage } from '../../providers/types.ts'
import { GatewayError } from '../../util/errors.ts'
import { replaceStringField } from '../../util/json-fields.ts'
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

export class ResponsesRelay implements StreamEncoder<RawEvent> {
  readonly keepalive = KEEPALIVE
  private seen: Usage | null = null
  private last: Record<string, unknown> | null = null
  private done = false
  private failed: GatewayError | null = null
  /** The next `sequence_number`, for events the gateway itself adds after a failure. */
  private seq = 0

  constructor(
    private readonly modelId: string,
    private readonly label: string,
  ) {}

  encode(ev: RawEvent): Uint8Array | null {
    if (this.done || ev.data === '[DONE]') return null
    const type = ev.event ?? eventType(ev.data)
    this.seq = nextSequence(ev.data, this.seq)
    let data = ev.data
    if (type !== undefined && LIFECYCLE.has(type)) {
      data = replaceStringField(ev.data, 2, 'model', this.modelId)
      this.lifecycle(type, ev.data)
    }
    return bytes.encode(encodeSSE(data, ev.event))
  }

  /** A stream that stopped before its terminal event was cut: the client is told as OpenAI would. */
  end(): Uint8Array | null {
    if (this.done) return null
    return this.error(streamInterrupted(this.label, 'the stream ended before response.completed'))
  }

  error(err: GatewayError): Uint8Array {
    this.failed = err
    this.done = true
    const failed = {
      ...(this.last ?? { object: 'response', output: [] }),
      model: this.modelId,
      status: 'failed',
      error: { code: 'server_error', message: err.message },
    }
    const events: ResponsesEvent[] = [
      { type: 'error', code: err.code, message: err.message, param: err.param, sequence_number: this.seq++ },
      { type: 'response.failed', response: failed, sequence_number: this.seq++ },
    ]
    return frameEvents(events)
  }

  usage(): Usage | null {
    return this.seen
  }

  failure(): GatewayError | null {
    return this.failed
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
