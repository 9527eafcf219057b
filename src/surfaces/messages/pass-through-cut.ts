/**
 * @module
 * The cut at the output allowance on the Messages pass-through (DESIGN §11): a request the
 * translation would strip (thinking, `cache_control`, betas — what Claude Code sends every turn)
 * keeps its byte pass-through under a token or money limit, and this gate counts the generated
 * text of its events as they are relayed — `text_delta`, `thinking_delta`, `input_json_delta`,
 * and a block's opening text or tool name — into the request's `OutputAllowance`, as the chat
 * chunk gate does on the translated path. At the first event with text after the count reached
 * the allowance (the event that crossed the line went out: the only one beyond), the answer ends
 * as Anthropic ends it at `max_tokens`: `content_block_stop` for each open block, `message_delta`
 * with `stop_reason: "max_tokens"` and the output counted, `message_stop`; the writer cancels the
 * upstream. Every event the gate lets through goes on byte for byte (signatures, cache usage,
 * unknown fields): the gate parses events to count them, never to re-encode them.
 *
 * A JSON request under a limit is sent upstream as a stream (`streamingBody`, json/fields.ts) and its events, as
 * the gate let them through, assembled into Anthropic's message (`assembleMessage`): a JSON body
 * arrives whole, so it could not be cut before the upstream had generated (and billed) all of it.
 * Known blocks' deltas are folded in (text, thinking and its signature, tool input, citations);
 * fields of the events the assembly does not know are kept as they came on the block or message.
 */
import type { Usage } from '../../operations/chat.ts'
import { AllowanceGate } from '../../pipeline/output-allowance.ts'
import type { EncodeContext } from '../../pipeline/surface.ts'
import type { AnthropicUsage } from '../../providers/anthropic/anthropic-types.ts'
import { convertAnthropicUsage } from '../../providers/anthropic/convert-anthropic-usage.ts'
import { mapAnthropicStreamError } from '../../providers/anthropic/map-anthropic-error.ts'
import { invalidResponse, streamInterrupted } from '../../providers/http.ts'
import { eventName, eventValue, markUnreadable, NOT_JSON } from '../byte-relay.ts'
import type { MessagesRequest } from './request-schema.ts'

const text = new TextEncoder()

type Json = Record<string, any>

/**
 * The event's name and its data parsed (null: not a JSON object), on its bytes where it is one
 * line (`eventValue`). Data that is not one JSON value is malformed (DESIGN §10): the event is
 * marked for the relay to drop, as nothing of it is counted.
 */
function parsed(ev: Uint8Array): { name: string | undefined; data: Json | null } {
  const buf = Buffer.from(ev.buffer, ev.byteOffset, ev.byteLength)
  const value = eventValue(buf, 0, buf.length)
  if (value === NOT_JSON) markUnreadable(ev, 0)
  const data = value !== null && typeof value === 'object' ? (value as Json) : null
  return { name: eventName(buf, 0), data }
}

/** The generated text an event carries: a delta's text, thinking or tool input, a block's opening text or tool name. */
function generated(name: string | undefined, data: Json | null): string {
  if (data === null) return ''
  const pick = (o: unknown, keys: string[]): string => {
    if (o === null || typeof o !== 'object') return ''
    let s = ''
    for (const k of keys) {
      const v = (o as Json)[k]
      if (typeof v === 'string') s += v
    }
    return s
  }
  if (name === 'content_block_delta') return pick(data.delta, ['text', 'thinking', 'partial_json'])
  if (name === 'content_block_start') return pick(data.content_block, ['text', 'thinking', 'name'])
  return ''
}

const frame = (type: string, o: Json): Uint8Array =>
  text.encode(`event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`)

export class MessagesCutGate extends AllowanceGate<Uint8Array> {
  /** Content blocks started and not stopped: each gets its `content_block_stop` at the cut. */
  private readonly open = new Set<number>()

  admit(ev: Uint8Array): boolean | Promise<boolean> {
    // Only content blocks carry generated text: the rest (ping, message_start / _delta / _stop)
    // go by on their name, unparsed.
    const head = eventName(Buffer.from(ev.buffer, ev.byteOffset, ev.byteLength), 0)
    if (head !== 'content_block_delta' && head !== 'content_block_start' && head !== 'content_block_stop')
      return true
    const { name, data } = parsed(ev)
    const index = typeof data?.index === 'number' ? data.index : 0
    if (name === 'content_block_stop') {
      this.open.delete(index)
      this.allowance.end(index)
      return true
    }
    const start = name === 'content_block_start'
    const t = generated(name, data)
    if (t === '') {
      if (start) this.open.add(index)
      return true
    }
    // Counted, then asked: may the event go with its text? Refused, it is taken back out — and a
    // refused start (a tool's name past the cap) opened nothing the ending must close.
    this.allowance.begin()
    this.allowance.addTo(index, t)
    const ok = this.allowance.allows()
    if (!start) return ok
    return typeof ok === 'boolean' ? this.opened(index, ok) : ok.then((yes) => this.opened(index, yes))
  }

  private opened(index: number, yes: boolean): boolean {
    if (yes) this.open.add(index)
    return yes
  }

  ending(): Uint8Array[] {
    // The usage as the upstream would report it at the cut: its input stays message_start's.
    const out = [...this.open].sort((a, b) => a - b).map((index) => frame('content_block_stop', { index }))
    this.open.clear()
    out.push(
      frame('message_delta', {
        delta: { stop_reason: 'max_tokens', stop_sequence: null },
        usage: { output_tokens: this.counted },
      }),
      frame('message_stop', {}),
    )
    return out
  }
}

/**
 * Anthropic's JSON message from its stream's events: `message_start`'s message, each block as
 * `content_block_start` opened it with its deltas folded in, `message_delta`'s stop reason and
 * usage. An `error` event fails the answer as the provider's error; a stream without
 * `message_stop` (the cut's ending has one) as interrupted.
 */
export function assembleMessage(
  events: Uint8Array[],
  ctx: EncodeContext<MessagesRequest>,
): { body: string; usage: Usage | null } {
  let message: Json | null = null
  let stopped = false
  const blocks: Json[] = []
  const json = new Map<number, string>()
  for (const ev of events) {
    const { name, data } = parsed(ev)
    if (data === null) continue
    switch (name) {
      case 'message_start':
        message = { ...(data.message as Json) }
        break
      case 'content_block_start':
        blocks[data.index] = { ...(data.content_block as Json) }
        break
      case 'content_block_delta': {
        const b = blocks[data.index]
        const d = data.delta as Json | undefined
        if (!b || !d) break
        if (d.type === 'text_delta') b.text = (b.text ?? '') + d.text
        else if (d.type === 'thinking_delta') b.thinking = (b.thinking ?? '') + d.thinking
        else if (d.type === 'signature_delta') b.signature = (b.signature ?? '') + d.signature
        else if (d.type === 'input_json_delta')
          json.set(data.index, (json.get(data.index) ?? '') + d.partial_json)
        else if (d.type === 'citations_delta') b.citations = [...(b.citations ?? []), d.citation]
        break
      }
      case 'message_delta':
        if (message) {
          const { usage, delta } = data as { usage?: Json; delta?: Json }
          Object.assign(message, delta ?? {})
          message.usage = { ...(message.usage as Json), ...usage }
        }
        break
      case 'message_stop':
        stopped = true
        break
      case 'error':
        throw mapAnthropicStreamError(data, ctx.provider)
    }
  }
  if (message === null) throw invalidResponse(ctx.provider.prefix, 'the stream has no message_start')
  // As the stream relay refuses it (pass-through.ts): a body that ended early is no whole answer.
  if (!stopped) throw streamInterrupted(ctx.provider.prefix, 'the stream ended before message_stop')
  for (const [index, partial] of json) {
    const b = blocks[index]
    if (!b) continue
    try {
      b.input = partial === '' ? (b.input ?? {}) : JSON.parse(partial)
    } catch {
      // Cut inside the tool input: half an object is no input; the block stays, empty, as at max_tokens.
      b.input = {}
    }
  }
  message.content = blocks.filter(Boolean)
  message.model = ctx.modelId
  const usage = message.usage ? convertAnthropicUsage(message.usage as AnthropicUsage) : null
  return { body: JSON.stringify(message), usage }
}
