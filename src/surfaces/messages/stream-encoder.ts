/**
 * @module
 * Chat chunks from a translating provider → Anthropic's stream events, state kept in the encoder:
 *
 * | chunk                                   | events                                                     |
 * |-----------------------------------------|------------------------------------------------------------|
 * | the first one                           | `message_start` (usage so far: none)                        |
 * | `delta.reasoning_content` / `reasoning` | a `thinking` block: `content_block_start`, `thinking_delta`s |
 * | `delta.content`, `delta.refusal`        | a `text` block: `content_block_start`, `text_delta`s         |
 * | a tool call with an `id`                | a `tool_use` block; its arguments as `input_json_delta`s     |
 * | another call while one is open          | kept whole, a block of its own once the open one closes     |
 * | text or thinking while a tool block is open | the calls' arguments whole JSON objects: closes the tool blocks, streams; else kept whole, after them |
 * | `finish_reason`, the usage chunk        | remembered                                                 |
 * | end of stream                           | `content_block_stop`, `message_delta` (stop_reason, usage), `message_stop` |
 *
 * A new kind of delta closes the open block first, so blocks never interleave. Keep-alives are
 * `ping` events; a failure after the first byte is an `error` event.
 */

import type { ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from '../../operations/chat.ts'
import type { StreamEncoder } from '../../pipeline/stream/encoder.ts'
import { chunkTextBytes } from '../../usage/estimate.ts'
import type { GatewayError } from '../../util/errors.ts'
import { messageId, toMessagesUsage } from './convert-usage.ts'
import { anthropicErrorBody } from './errors.ts'
import { JsonEnd } from './json-end.ts'
import { mapFinishReason } from './map-stop-reason.ts'

const text = new TextEncoder()
export const PING = text.encode('event: ping\ndata: {"type":"ping"}\n\n')

const frame = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`

const toolUseId = () => `toolu_${crypto.randomUUID().replaceAll('-', '')}`

type Open = { kind: 'text' | 'thinking' } | { kind: 'tool'; toolIndex: number; end: JsonEnd }

export class MessagesStreamEncoder implements StreamEncoder<ChatCompletionChunk> {
  readonly keepalive = PING
  private started = false
  private block: Open | null = null
  private nextIndex = 0
  private finish: FinishReason | null = null
  /** The answer was a refusal (OpenAI's `delta.refusal`): `stop_reason: refusal`. */
  private refused = false
  private seen: Usage | null = null
  private relayed = 0
  /** Tool calls seen while another call's block is open, by chat `index` (`toolCall`). */
  private readonly later = new Map<number, { id: string; name: string; args: string; end: JsonEnd }>()
  /**
   * Text and thinking that came while a tool block is open and a call's arguments are not yet a
   * whole JSON object (`JsonEnd`; one call, or calls interleaving): closing the open block then
   * would lose the arguments its call (and the kept ones) still send — a block cannot be reopened —
   * so they are kept, in order, and become their blocks after the tool blocks (decisions.md: a
   * call is never split; the text waits until the calls are whole). Text when every call's
   * arguments are whole closes the tool blocks and streams. A failure sends what is kept before
   * its error event: it was counted as relayed (`relayedBytes`).
   */
  private readonly held: { kind: 'text' | 'thinking'; text: string }[] = []

  constructor(private readonly modelId: string) {}

  relayedBytes(): number {
    return this.relayed
  }

  encode(chunk: ChatCompletionChunk): Uint8Array | null {
    const out = this.encodeText(chunk)
    return out === null ? null : text.encode(out)
  }

  encodeText(chunk: ChatCompletionChunk): string | null {
    this.relayed += chunkTextBytes(chunk)
    let out = this.start(chunk.id)
    if (chunk.usage) this.seen = chunk.usage
    const choice = chunk.choices[0]
    if (choice) {
      const delta = choice.delta as ChatCompletionChunk['choices'][number]['delta'] & {
        reasoning_content?: string | null
        reasoning?: string | null
      }
      const thinking = delta.reasoning_content ?? delta.reasoning
      if (typeof thinking === 'string' && thinking) out += this.prose('thinking', thinking)
      if (delta.content) out += this.text(delta.content)
      if (delta.refusal) {
        this.refused = true
        out += this.text(delta.refusal)
      }
      for (const call of delta.tool_calls ?? []) out += this.toolCall(call)
      if (choice.finish_reason) this.finish = choice.finish_reason
    }
    return out || null
  }

  end(): Uint8Array {
    let out = this.start('')
    out += this.close()
    const usage = toMessagesUsage(this.seen)
    out += frame('message_delta', {
      delta: { stop_reason: mapFinishReason(this.finish, this.refused), stop_sequence: null },
      usage,
    })
    out += frame('message_stop', {})
    return text.encode(out)
  }

  error(err: GatewayError): Uint8Array {
    const kept = this.held.length > 0 || this.later.size > 0 ? this.close() : ''
    return text.encode(`${kept}event: error\ndata: ${JSON.stringify(anthropicErrorBody(err))}\n\n`)
  }

  usage(): Usage | null {
    return this.seen
  }

  private start(id: string): string {
    if (this.started) return ''
    this.started = true
    return frame('message_start', {
      message: {
        id: messageId(id || `gen_${crypto.randomUUID().replaceAll('-', '')}`),
        type: 'message',
        role: 'assistant',
        model: this.modelId,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    })
  }

  private text(text: string): string {
    return this.prose('text', text)
  }

  /**
   * A text or thinking delta: its block's, or held while a tool block is open and a call's
   * arguments are not whole (`held`).
   */
  private prose(kind: 'text' | 'thinking', text: string): string {
    if (this.block?.kind === 'tool' && !this.callsWhole(this.block.end)) {
      const last = this.held.at(-1)
      if (last?.kind === kind) last.text += text
      else this.held.push({ kind, text })
      return ''
    }
    return this.open({ kind }, BLOCK[kind]) + this.delta(DELTA[kind](text))
  }

  /** The open call's arguments and every kept call's are whole JSON objects: none can go on. */
  private callsWhole(open: JsonEnd): boolean {
    if (!open.whole) return false
    for (const call of this.later.values()) if (!call.end.whole) return false
    return true
  }

  /**
   * A chat tool-call delta, routed by its `index`. The first call streams as its block; the calls
   * after it (another `index` while a tool block is open) are kept whole until the open block
   * closes: chat deltas may interleave by `index`, but Anthropic's blocks cannot, so arguments
   * are never appended to another call's block.
   */
  private toolCall(call: ToolCallDelta): string {
    const open = this.block
    const args = call.function?.arguments ?? ''
    if (open?.kind === 'tool' && open.toolIndex === call.index) {
      open.end.feed(args)
      return args ? this.delta({ type: 'input_json_delta', partial_json: args }) : ''
    }
    if (open?.kind === 'tool' || this.later.has(call.index)) {
      const kept = this.later.get(call.index) ?? { id: '', name: '', args: '', end: new JsonEnd() }
      this.later.set(call.index, kept)
      if (call.id && !kept.id) kept.id = call.id
      if (call.function?.name && !kept.name) kept.name = call.function.name
      kept.args += args
      kept.end.feed(args)
      return ''
    }
    if (!call.id) return ''
    const end = new JsonEnd()
    end.feed(args)
    const out = this.open(
      { kind: 'tool', toolIndex: call.index, end },
      { type: 'tool_use', id: call.id, name: call.function?.name ?? '', input: {} },
    )
    return out + (args ? this.delta({ type: 'input_json_delta', partial_json: args }) : '')
  }

  /** Opens a block of `kind` unless that block is the open one. */
  private open(kind: Open, contentBlock: Record<string, unknown>): string {
    if (this.block && this.block.kind === kind.kind && kind.kind !== 'tool') return ''
    const out = this.close()
    this.block = kind
    return out + frame('content_block_start', { index: this.nextIndex, content_block: contentBlock })
  }

  private delta(delta: Record<string, unknown>): string {
    return frame('content_block_delta', { index: this.nextIndex, delta })
  }

  /** Ends the open block — after a tool block, the calls kept whole behind it, each a block. */
  private close(): string {
    if (!this.block) return ''
    const wasTool = this.block.kind === 'tool'
    this.block = null
    let out = frame('content_block_stop', { index: this.nextIndex++ })
    if (!wasTool) return out
    const later = [...this.later.values()]
    this.later.clear()
    for (const call of later) {
      out += frame('content_block_start', {
        index: this.nextIndex,
        content_block: { type: 'tool_use', id: call.id || toolUseId(), name: call.name, input: {} },
      })
      if (call.args) out += this.delta({ type: 'input_json_delta', partial_json: call.args })
      out += frame('content_block_stop', { index: this.nextIndex++ })
    }
    for (const { kind, text } of this.held.splice(0)) {
      out += frame('content_block_start', { index: this.nextIndex, content_block: BLOCK[kind] })
      out += this.delta(DELTA[kind](text))
      out += frame('content_block_stop', { index: this.nextIndex++ })
    }
    return out
  }
}

const BLOCK = {
  text: { type: 'text', text: '' },
  thinking: { type: 'thinking', thinking: '', signature: '' },
}
const DELTA = {
  text: (text: string) => ({ type: 'text_delta', text }),
  thinking: (thinking: string) => ({ type: 'thinking_delta', thinking }),
}
