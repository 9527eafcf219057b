/**
 * @module
 * An Anthropic message as the event stream it stands for: for an Anthropic-compatible server that
 * was asked for a stream and answered one whole message (it ignored `stream`). The Messages
 * pass-through's relay, its cut under a limit and its assembly (pipeline/call.ts,
 * `Forwarding.events`), and the adapter's stream decoder on a translated route, then read it as
 * any stream: `message_start` (the message without its content, `stop_reason` null), each
 * block as `content_block_start`, its text, thinking or tool input in small pieces (`TextPieces`:
 * so a cut at the output allowance falls inside it, DESIGN §11; only as far as it may fall) and a thinking block's
 * `signature_delta`, `content_block_stop`; then `message_delta` (stop reason, usage) and
 * `message_stop`. A block of another type (redacted thinking, a server tool's result) opens whole
 * and stops. An `{"type": "error"}` body is the failure it names.
 *
 * @example
 * messagesForwarding.events = (json, ctx) => messageEvents(json, ctx.provider, ctx.cutWithin)
 */
import type { ProviderConfig } from '../../config/schema.ts'
import { invalidResponse } from '../http.ts'
import { eventStream } from '../shared/event-stream.ts'
import { TextPieces } from '../shared/text-pieces.ts'
import type { AnthropicErrorBody } from './anthropic-types.ts'
import { mapAnthropicStreamError } from './map-anthropic-error.ts'

type Block = Record<string, unknown> & { type?: unknown }
type Message = { type?: unknown; content?: unknown; usage?: Record<string, unknown> }

/** Checked whole (a failure is an HTTP error), then made as it is read (event-stream.ts). */
export function messageEvents(
  json: unknown,
  provider: ProviderConfig,
  cutWithin?: number,
): ReadableStream<Uint8Array> {
  const m = json as Message | null
  if (m?.type === 'error') throw mapAnthropicStreamError(m as AnthropicErrorBody, provider)
  if (m === null || typeof m !== 'object' || m.type !== 'message' || !Array.isArray(m.content))
    throw invalidResponse(provider.prefix, 'the body is not an Anthropic message')
  if ((m.content as unknown[]).some((block) => block === null || typeof block !== 'object'))
    throw invalidResponse(provider.prefix, "a message's content block is not an object")
  return eventStream(events(m, new TextPieces(cutWithin)))
}

function* events(m: Message, pieces: TextPieces): Generator<string> {
  const { content, stop_reason, stop_sequence, usage, ...head } = m as Record<string, unknown>
  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
  const u = (usage ?? {}) as Record<string, unknown>
  yield event('message_start', {
    message: {
      ...head,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...u, output_tokens: 0 },
    },
  })
  const blocks = content as Block[]
  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index]!
    const delta = (d: Record<string, unknown>) => event('content_block_delta', { index, delta: d })
    if (block.type === 'text' && typeof block.text === 'string') {
      yield event('content_block_start', { index, content_block: { ...block, text: '' } })
      for (const text of pieces.of(block.text)) yield delta({ type: 'text_delta', text })
    } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      yield event('content_block_start', { index, content_block: { ...block, thinking: '', signature: '' } })
      for (const thinking of pieces.of(block.thinking)) yield delta({ type: 'thinking_delta', thinking })
      if (typeof block.signature === 'string')
        yield delta({ type: 'signature_delta', signature: block.signature })
    } else if ((block.type === 'tool_use' || block.type === 'server_tool_use') && 'input' in block) {
      yield event('content_block_start', { index, content_block: { ...block, input: {} } })
      for (const partial_json of pieces.of(JSON.stringify(block.input ?? {})))
        yield delta({ type: 'input_json_delta', partial_json })
    } else yield event('content_block_start', { index, content_block: block })
    yield event('content_block_stop', { index })
  }
  yield event('message_delta', {
    delta: { stop_reason: stop_reason ?? null, stop_sequence: stop_sequence ?? null },
    usage: u,
  })
  yield event('message_stop', {})
}
