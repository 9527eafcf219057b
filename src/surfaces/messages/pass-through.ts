/**
 * @module
 * Messages → anthropic providers: the request and the answer pass through. The upstream gets the
 * client's body with only `model` changed, plus the client's `anthropic-version` and
 * `anthropic-beta` headers verbatim; the client gets the upstream's events byte for byte except
 * the model id in `message_start` (`ByteRelay`: events framed at the byte level). Usage is read
 * from `message_start` and `message_delta` only — no other event is parsed or re-encoded — so
 * thinking blocks, signatures, cache control and whatever betas add survive. Under a token or
 * money limit its events are also counted and cut at the allowance (pass-through-cut.ts).
 */

import type { CatalogueEntry } from '../../catalogue/entry.ts'
import { setTopLevel, spliceTopLevel, streamingBody, topLevelValue } from '../../json/fields.ts'
import type { JsonText } from '../../json/spliced.ts'
import type { Usage } from '../../operations/chat.ts'
import type { EncodeContext, Forwarding } from '../../pipeline/surface.ts'
import { MIN_THINKING_BUDGET } from '../../providers/anthropic/anthropic-thinking.ts'
import type { AnthropicUsage } from '../../providers/anthropic/anthropic-types.ts'
import { convertAnthropicUsage, mergeUsage } from '../../providers/anthropic/convert-anthropic-usage.ts'
import { mapAnthropicStreamError } from '../../providers/anthropic/map-anthropic-error.ts'
import { messageEvents } from '../../providers/anthropic/message-events.ts'
import { maxResponseBytes } from '../../providers/body-limit.ts'
import { invalidResponse, streamInterrupted } from '../../providers/http.ts'
import { scrubbedEventData } from '../../providers/scrub.ts'
import { GatewayError } from '../../util/errors.ts'
import {
  ByteRelay,
  byteRelayed,
  type EventAction,
  eventData,
  eventName,
  stringValueBytes,
} from '../byte-relay.ts'
import { anthropicErrorBody } from './errors.ts'
import { lostInTranslation } from './lost-in-translation.ts'
import { assembleMessage, MessagesCutGate } from './pass-through-cut.ts'
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

/**
 * The client's body with the upstream's model name. Given the client's `text`, edited in it (every
 * other byte as sent; a large body kept as its pieces, sent without a copy: `json/spliced.ts`);
 * without it, or where the text has a duplicated key, re-serialised (JSON key order is kept).
 */
export function forwardBody(view: { model: string }, entry: CatalogueEntry, text?: string): JsonText {
  const model = entry.model.upstream_name ?? entry.model.name
  const edited =
    text === undefined
      ? null
      : spliceTopLevel(text, new Map([['model', JSON.stringify(model)]]), '', Object.keys(view).length)
  return edited ?? JSON.stringify({ ...view, model })
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
/** Where a `content_block_delta` carries generated text: a text, thinking or tool-input delta. */
const DELTA_TEXT = ['"text"', '"thinking"', '"partial_json"'].map((k) => Buffer.from(k))

/**
 * A body whose `max_tokens` the limits clamped to `n`. Its thinking budget, when it no longer fits
 * below the cap, is fitted as the translated path fits it (3/4 of the cap, at least 1,024), since
 * Anthropic refuses a budget at or above `max_tokens`; where even that cannot fit, 400 naming
 * `max_tokens`, never sent upstream.
 */
export function clampMaxTokens(body: string, n: number): string {
  const values: Record<string, string> = { max_tokens: String(n) }
  const thinking = topLevelValue(body, 'thinking')
  const t =
    thinking === undefined ? null : (JSON.parse(thinking) as { type?: unknown; budget_tokens?: unknown })
  if (t?.type === 'enabled' && typeof t.budget_tokens === 'number' && t.budget_tokens >= n) {
    if (n <= MIN_THINKING_BUDGET)
      throw new GatewayError(
        400,
        'invalid_value',
        `max_tokens: the limits leave ${n} output tokens for this request, which leaves no room to think (Anthropic's thinking budget is at least ${MIN_THINKING_BUDGET}, below max_tokens). Send a smaller request, wait for the limits to free up, or turn thinking off.`,
        { param: 'max_tokens' },
      )
    const budget = Math.max(MIN_THINKING_BUDGET, Math.floor((n * 3) / 4))
    values.thinking = JSON.stringify({ ...t, budget_tokens: budget })
  }
  return setTopLevel(body, values)
}

export const messagesForwarding: Forwarding<MessagesRequest> = {
  kind: 'anthropic',
  request: (view, entry, bodyText, headers) => ({
    path: '/v1/messages',
    body: forwardBody(view, entry, bodyText),
    headers: forwardHeaders(headers),
  }),
  outputCap: { field: () => 'max_tokens', clamp: clampMaxTokens },
  lostInTranslation,

  relayJson(body, ctx) {
    let usage: Usage | null = null
    try {
      const parsed = JSON.parse(body) as { usage?: AnthropicUsage }
      usage = convertAnthropicUsage(parsed.usage)
    } catch {
      throw invalidResponse(ctx.provider.prefix, 'the body is not JSON')
    }
    return { body: swapModel(body, ctx.modelId), usage }
  },

  // An Anthropic-compatible server that ignored `stream`: its message, read as its events.
  events: (json, ctx) => messageEvents(json, ctx.provider, ctx.cutWithin),

  relay: (upstream, ctx, encodeCtx, framed) =>
    byteRelayed(upstream, ctx, new MessagesRelay(encodeCtx), framed),

  cut: (allowance, inputTokens) => new MessagesCutGate(allowance, inputTokens),
  streamed: (body) => streamingBody(body),
  assemble: assembleMessage,
}

/** One per relayed stream: the upstream's bytes, with the model id swapped in `message_start`. */
export class MessagesRelay extends ByteRelay {
  readonly keepalive = PING
  private readonly usageSoFar: AnthropicUsage = {}
  private relayed = 0
  private stopped = false
  private failed: GatewayError | null = null

  constructor(private readonly ctx: EncodeContext<MessagesRequest>) {
    super(maxResponseBytes(ctx.provider), ctx.provider.prefix)
  }

  protected event(buf: Buffer, start: number, end: number): EventAction {
    const name = eventName(buf, start)
    switch (name) {
      case 'content_block_delta':
        // Counted (from the bytes) only for the estimate if the client disconnects.
        for (const key of DELTA_TEXT) this.relayed += stringValueBytes(buf, start, end, key)
        return undefined
      case 'message_start': {
        const data = eventData(buf, start, end)
        const parsed = parse(data) as { message?: { usage?: AnthropicUsage } } | null
        mergeUsage(this.usageSoFar, parsed?.message?.usage)
        return text.encode(`event: ${name}\ndata: ${swapModel(data, this.ctx.modelId)}\n\n`)
      }
      case 'message_delta': {
        const parsed = parse(eventData(buf, start, end)) as { usage?: AnthropicUsage } | null
        mergeUsage(this.usageSoFar, parsed?.usage)
        return undefined
      }
      case 'message_stop':
        this.stopped = true
        return undefined
      case 'error': {
        const data = eventData(buf, start, end)
        const body = parse(data) as {
          error?: { type?: string; message?: string }
        } | null
        const failed = mapAnthropicStreamError(body ?? {}, this.ctx.provider)
        this.failed = failed
        // Not JSON (a proxy's page, a cut line): no client could read it; ours in its place.
        if (body === null) return this.error(failed)
        // The upstream's own event, as it came but for the provider's key and address.
        const clean = scrubbedEventData(data, this.ctx.provider, () =>
          JSON.stringify(anthropicErrorBody(failed)),
        )
        return clean === null ? undefined : text.encode(`event: error\ndata: ${clean}\n\n`)
      }
    }
    return undefined
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

  relayedBytes(): number {
    return this.relayed
  }
}

function parse(data: string): unknown {
  try {
    return JSON.parse(data)
  } catch {
    return null
  }
}
