/**
 * @module
 * An Anthropic message as the event stream it stands for: for an Anthropic-compatible server that
 * was asked for a stream and answered one whole message (it ignored `stream`). The Messages
 * pass-through's relay, its cut under a limit and its assembly (pipeline/call.ts,
 * `Forwarding.events`), and the adapter's stream decoder on a translated route, then read it as
 * any stream: `message_start` (the message without its content, `stop_reason` null), each
 * block as `content_block_start`, its text, thinking or tool input in small pieces (`textPieces`:
 * so a cut at the output allowance falls inside it, DESIGN §11) and a thinking block's
 * `signature_delta`, `content_block_stop`; then `message_delta` (stop reason, usage) and
 * `message_stop`. A block of another type (redacted thinking, a server tool's result) opens whole
 * and stops. An `{"type": "error"}` body is the failure it names.
 *
 * @example
 * messagesForwarding.events = (json, ctx) => messageEvents(json, ctx.provider)
 */
import type { ProviderConfig } from '../../config/schema.ts'
import { invalidResponse } from '../http.ts'
import { textPieces } from '../shared/text-pieces.ts'
import type { AnthropicErrorBody } from './anthropic-types.ts'
import { mapAnthropicStreamError } from './map-anthropic-error.ts'

type Block = Record<string, unknown> & { type?: unknown }

export function messageEvents(json: unknown, provider: ProviderConfig): ReadableStream<Uint8Array> {
  const m = json as { type?: unknown; content?: unknown; usage?: Record<string, unknown> } | null
  if (m?.type === 'error') throw mapAnthropicStreamError(m as AnthropicErrorBody, provider)
  if (m === null || typeof m !== 'object' || m.type !== 'message' || !Array.isArray(m.content))
    throw invalidResponse(provider.prefix, 'the body is not an Anthropic message')
  const { content, stop_reason, stop_sequence, usage, ...head } = m as Record<string, unknown>
  const out: string[] = []
  const event = (type: string, data: Record<string, unknown>) =>
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  const u = (usage ?? {}) as Record<string, unknown>
  event('message_start', {
    message: {
      ...head,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...u, output_tokens: 0 },
    },
  })
  ;(content as Block[]).forEach((block, index) => {
    if (block === null || typeof block !== 'object')
      throw invalidResponse(provider.prefix, "a message's content block is not an object")
    const delta = (d: Record<string, unknown>) => event('content_block_delta', { index, delta: d })
    if (block.type === 'text' && typeof block.text === 'string') {
      event('content_block_start', { index, content_block: { ...block, text: '' } })
      for (const text of textPieces(block.text)) delta({ type: 'text_delta', text })
    } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      event('content_block_start', { index, content_block: { ...block, thinking: '', signature: '' } })
      for (const thinking of textPieces(block.thinking)) delta({ type: 'thinking_delta', thinking })
      if (typeof block.signature === 'string') delta({ type: 'signature_delta', signature: block.signature })
    } else if ((block.type === 'tool_use' || block.type === 'server_tool_use') && 'input' in block) {
      event('content_block_start', { index, content_block: { ...block, input: {} } })
      for (const partial_json of textPieces(JSON.stringify(block.input ?? {})))
        delta({ type: 'input_json_delta', partial_json })
    } else event('content_block_start', { index, content_block: block })
    event('content_block_stop', { index })
  })
  event('message_delta', {
    delta: { stop_reason: stop_reason ?? null, stop_sequence: stop_sequence ?? null },
    usage: u,
  })
  event('message_stop', {})
  const bytes = new TextEncoder().encode(out.join(''))
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes)
      controller.close()
    },
  })
}
