/**
 * @module
 * Messages → anthropic providers: the request and the answer pass through. The upstream gets the
 * client's body with only `model` changed, plus the client's `anthropic-version` and
 * `anthropic-beta` headers verbatim; the client gets the upstream's events byte for byte except
 * the model id in `message_start`. Usage is read from `message_start` and `message_delta` only —
 * no other event is parsed or re-encoded — so thinking blocks, signatures, cache control and
 * whatever betas add survive.
 */
import type { CatalogueEntry } from '../../gateway/routing.ts'
import type { StreamEncoder } from '../../pipeline/stream-writer.ts'
import type { EncodeContext, Forwarding, RawEvent } from '../../pipeline/surface.ts'
import type { AnthropicUsage } from '../../providers/anthropic/anthropic-types.ts'
import { convertAnthropicUsage, mergeUsage } from '../../providers/anthropic/convert-anthropic-usage.ts'
import { mapAnthropicStreamError } from '../../providers/anthropic/map-anthropic-error.ts'
import { invalidResponse, streamInterrupted } from '../../providers/http.ts'
import type { Usage } from '../../providers/types.ts'
import type { GatewayError } from '../../util/errors.ts'
import { anthropicErrorBody } from './errors.ts'
import type { MessagesRequest } from './request-schema.ts'
import { PING } from './stream-encoder.ts'

/** Client headers an anthropic upstream must see as they came. */
const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta']

export function forwardHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of FORWARDED_HEADERS) {
    const value = headers.get(name)
    if (value !== null) out[name] = value
  }
  return out
}

/** The client's body with the upstream's model name (re-serialised: JSON key order is kept). */
export function forwardBody(view: { model: string }, entry: CatalogueEntry): string {
  return JSON.stringify({ ...view, model: entry.model.upstream_name ?? entry.model.name })
}

/**
 * The first `"model":"…"` → the client's id, leaving every other byte alone. The upstream may
 * report a dated snapshot name rather than the one the gateway sent, so the value is not assumed.
 * In `message_start` and in a message body `model` comes before any content.
 */
export function swapModel(json: string, modelId: string): string {
  const m = MODEL_FIELD.exec(json)
  if (!m) return json
  return json.slice(0, m.index) + `"model":${JSON.stringify(modelId)}` + json.slice(m.index + m[0].length)
}

const MODEL_FIELD = /"model"\s*:\s*"(?:[^"\\]|\\.)*"/

const text = new TextEncoder()

export const messagesForwarding: Forwarding<MessagesRequest> = {
  kind: 'anthropic',
  request: (view, entry, _bodyText, headers) => ({
    path: '/v1/messages',
    body: forwardBody(view, entry),
    headers: forwardHeaders(headers),
  }),

  async relayJson(upstream, ctx) {
    const body = await upstream.text()
    let usage: Usage | null = null
    try {
      const parsed = JSON.parse(body) as { usage?: AnthropicUsage }
      usage = convertAnthropicUsage(parsed.usage)
    } catch {
      throw invalidResponse(ctx.provider.prefix, 'the body is not JSON')
    }
    return { body: swapModel(body, ctx.modelId), usage }
  },

  relayStream: (ctx) => new RelayEncoder(ctx),
}

/** One per relayed stream. */
class RelayEncoder implements StreamEncoder<RawEvent> {
  readonly keepalive = PING
  private readonly usageSoFar: AnthropicUsage = {}
  private relayed = 0
  private stopped = false
  private failed: GatewayError | null = null
  private readonly label: string

  constructor(private readonly ctx: EncodeContext<MessagesRequest>) {
    this.label = ctx.provider.prefix
  }

  encode(ev: RawEvent): Uint8Array {
    let data = ev.data
    switch (ev.event) {
      case 'message_start': {
        const start = parse(data) as { message?: { usage?: AnthropicUsage } } | null
        mergeUsage(this.usageSoFar, start?.message?.usage)
        data = swapModel(data, this.ctx.modelId)
        break
      }
      case 'message_delta':
        mergeUsage(this.usageSoFar, (parse(data) as { usage?: AnthropicUsage } | null)?.usage)
        break
      case 'content_block_delta':
        // Parsed only to count generated text, for the estimate if the client disconnects.
        this.relayed += anthropicDeltaChars(parse(data))
        break
      case 'message_stop':
        this.stopped = true
        break
      case 'error': {
        const body = parse(data) as { error?: { type?: string; message?: string } } | null
        this.failed = mapAnthropicStreamError(body ?? {}, this.ctx.provider)
        break
      }
    }
    const head = ev.event === undefined ? '' : `event: ${ev.event}\n`
    return text.encode(`${head}data: ${data}\n\n`)
  }

  end(): Uint8Array | null {
    if (!this.stopped && !this.failed)
      throw streamInterrupted(this.label, 'the stream ended before message_stop')
    return null
  }

  error(err: GatewayError): Uint8Array {
    return text.encode(`event: error\ndata: ${JSON.stringify(anthropicErrorBody(err))}\n\n`)
  }

  usage(): Usage | null {
    return Object.keys(this.usageSoFar).length ? convertAnthropicUsage(this.usageSoFar) : null
  }

  failure(): GatewayError | null {
    return this.failed
  }

  relayedChars(): number {
    return this.relayed
  }
}

/** Generated text in a `content_block_delta`: text, thinking or tool-input JSON. */
function anthropicDeltaChars(ev: unknown): number {
  const d = (ev as { delta?: Record<string, unknown> } | null)?.delta
  if (!d) return 0
  const v = d.text ?? d.thinking ?? d.partial_json
  return typeof v === 'string' ? v.length : 0
}

function parse(data: string): unknown {
  try {
    return JSON.parse(data)
  } catch {
    return null
  }
}
