/**
 * @module
 * Chat chunks (from any translating adapter) → the Responses stream events OpenAI sends, in its
 * order: `response.created`, `response.in_progress`, then per output item `output_item.added`, its
 * parts and deltas, their `.done` events and `output_item.done`, and finally `response.completed`
 * (or `response.incomplete`) with usage — emitted by `end`, once the upstream's usage is known; or,
 * when the upstream fails after the first byte, `error` and `response.failed`. Every event carries
 * `sequence_number`, counting from 0. One instance per stream: all state is inside. `events` gives
 * the event objects; `encode` / `end` / `error` the same as SSE bytes (`event: <type>`, `data:`).
 *
 * Reasoning text from OpenAI-compatible upstreams (`delta.reasoning_content` / `delta.reasoning`)
 * becomes a `reasoning` item with one summary part.
 *
 * @example
 * const enc = new ResponsesStreamEncoder({ view, modelId: 'demo/echo' })
 * for await (const chunk of chunks) socket.write(enc.encode(chunk))
 * socket.write(enc.end())
 */

import type { ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from '../../operations/chat.ts'
import type { StreamEncoder } from '../../pipeline/stream/encoder.ts'
import { encodeSSE } from '../../providers/sse/index.ts'
import { chunkTextBytes } from '../../usage/estimate.ts'
import type { GatewayError } from '../../util/errors.ts'
import { outputTextOf } from './compaction.ts'
import {
  compactionItem,
  functionCallItem,
  messageItem,
  outputText,
  reasoningItem,
  reasoningText,
} from './encode-response.ts'
import {
  finishResponse,
  lastItemStatus,
  newId,
  type OutputItem,
  type ResponseContext,
  type ResponseObject,
  responseShell,
  servedTier,
} from './response-object.ts'

export type ResponsesEvent = { type: string; sequence_number: number } & Record<string, unknown>

type Emit = (event: Record<string, unknown> & { type: string }) => void

/** The item being streamed; only one is open at a time, as OpenAI streams them. */
type Open =
  | { kind: 'reasoning'; id: string; index: number; text: string }
  | { kind: 'text' | 'refusal'; id: string; index: number; text: string }
  | { kind: 'call'; id: string; index: number; callId: string; name: string; args: string; chatIndex: number }

const bytes = new TextEncoder()
const KEEPALIVE = bytes.encode(': keep-alive\n\n')

/**
 * The `error` event's body as OpenAI's API streams it: the error's `type`, `code`, `message` and
 * `param` nested under `error`, as in the chat surface's in-band error. The published spec
 * (`ResponseErrorEvent`) puts them beside `type`, but the live API nests them
 * (`recorded/openai-responses-error.chunks.txt`; openai/openai-dotnet#881), and clients read
 * the nesting: the OpenAI SDKs throw an `APIError` only for an event with `error`, and the AI SDK
 * reads either. The caller adds `sequence_number`.
 */
export function errorEventFields(err: GatewayError): { type: 'error'; error: Record<string, unknown> } {
  return { type: 'error', error: { ...err.toBody().error } }
}

/** Frames events as OpenAI does: `event: <type>` and one `data:` line each. */
export function frameEvents(events: readonly ResponsesEvent[]): Uint8Array {
  return bytes.encode(frameEventsText(events))
}

function frameEventsText(events: readonly ResponsesEvent[]): string {
  let out = ''
  for (const event of events) out += encodeSSE(JSON.stringify(event), event.type)
  return out
}

export class ResponsesStreamEncoder implements StreamEncoder<ChatCompletionChunk> {
  readonly keepalive = KEEPALIVE
  private seq = 0
  private started = false
  private open: Open | null = null
  /** Tool calls after the open one, by chat index, kept whole until it ends (`toolCallDelta`). */
  private readonly later = new Map<number, { callId: string; name: string; args: string }>()
  private readonly output: OutputItem[] = []
  private finish: FinishReason | null = null
  private seen: Usage | null = null
  /** The tier serving the answer, as the upstream's latest chunk named it (OpenAI names it on each). */
  private tier: string | undefined
  private relayed = 0
  private readonly response: ResponseObject
  /** Events of the current call, handed out and reset by each public method. */
  private pending: ResponsesEvent[] = []
  private readonly emit: Emit = (event) => {
    this.pending.push({ ...event, sequence_number: this.seq++ } as ResponsesEvent)
  }

  private readonly namespaces: ReadonlyMap<string, string>
  private readonly compacting: boolean

  constructor(ctx: ResponseContext) {
    this.response = responseShell(ctx, newId('resp'), Math.floor(Date.now() / 1000))
    this.namespaces = ctx.view.decoded.tools.namespaces
    this.compacting = ctx.view.decoded.compacting
  }

  encode(chunk: ChatCompletionChunk): Uint8Array | null {
    const out = this.encodeText(chunk)
    return out === null ? null : bytes.encode(out)
  }

  encodeText(chunk: ChatCompletionChunk): string | null {
    const events = this.events(chunk)
    this.relayed += chunkTextBytes(chunk)
    return events.length ? frameEventsText(events) : null
  }

  relayedBytes(): number {
    return this.relayed
  }

  end(): Uint8Array {
    return frameEvents(this.endEvents())
  }

  error(err: GatewayError): Uint8Array {
    return frameEvents(this.failEvents(err))
  }

  usage(): Usage | null {
    return this.seen
  }

  /** The events one chunk produces. */
  events(chunk: ChatCompletionChunk): ResponsesEvent[] {
    const emit = this.emit
    this.begin(emit)
    if (chunk.usage) this.seen = chunk.usage
    this.tier = servedTier(chunk.service_tier) ?? this.tier
    const choice = chunk.choices.find((c) => c.index === 0)
    if (choice) {
      const delta = choice.delta as ChatCompletionChunk['choices'][number]['delta'] & Record<string, unknown>
      const reasoning = reasoningText(delta)
      if (reasoning) this.reasoningDelta(reasoning, emit)
      if (delta.refusal) this.textDelta('refusal', delta.refusal, emit)
      if (delta.content) this.textDelta('text', delta.content, emit)
      for (const call of delta.tool_calls ?? []) this.toolCallDelta(call, emit)
      if (choice.finish_reason) this.finish = choice.finish_reason
    }
    return this.take()
  }

  /** The events after the last chunk: the open item closed, then `response.completed` with usage. */
  endEvents(): ResponsesEvent[] {
    const emit = this.emit
    this.begin(emit)
    // The last item is `incomplete` when the answer stopped short (max_output_tokens, content_filter).
    this.close(emit, lastItemStatus(this.finish))
    if (this.compacting) {
      // Codex's compaction: the answer's text, as the one `compaction` item it keeps.
      const item = compactionItem(outputTextOf(this.output))
      const index = this.output.length
      emit({ type: 'response.output_item.added', output_index: index, item })
      emit({ type: 'response.output_item.done', output_index: index, item })
      this.output.push(item)
    }
    const now = Math.floor(Date.now() / 1000)
    const res = finishResponse(this.response, this.output, this.seen, this.finish, now, this.tier)
    emit({ type: res.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response: res })
    return this.take()
  }

  /** The events that end a stream that failed after its first byte: `error`, then `response.failed`. */
  failEvents(err: GatewayError): ResponsesEvent[] {
    const emit = this.emit
    this.begin(emit)
    emit(errorEventFields(err))
    const res = this.response
    res.status = 'failed'
    res.output = this.output
    if (this.tier) res.service_tier = this.tier
    res.error = { code: err.status === 429 ? 'rate_limit_exceeded' : 'server_error', message: err.message }
    emit({ type: 'response.failed', response: res })
    return this.take()
  }

  private take(): ResponsesEvent[] {
    const events = this.pending
    this.pending = []
    return events
  }

  private begin(emit: Emit): void {
    if (this.started) return
    this.started = true
    emit({ type: 'response.created', response: { ...this.response } })
    emit({ type: 'response.in_progress', response: { ...this.response } })
  }

  /** Closes the open item and announces `item`; returns its output index. */
  private opened(emit: Emit, item: OutputItem): number {
    this.close(emit)
    const index = this.output.length
    emit({ type: 'response.output_item.added', output_index: index, item })
    return index
  }

  private reasoningDelta(text: string, emit: Emit): void {
    if (this.open?.kind !== 'reasoning') {
      const id = newId('rs')
      const index = this.opened(emit, reasoningItem(id, null))
      this.open = { kind: 'reasoning', id, index, text: '' }
      emit({
        ...this.at(),
        summary_index: 0,
        type: 'response.reasoning_summary_part.added',
        part: summaryPart(''),
      })
    }
    this.open.text += text
    emit({ ...this.at(), summary_index: 0, type: 'response.reasoning_summary_text.delta', delta: text })
  }

  private textDelta(kind: 'text' | 'refusal', text: string, emit: Emit): void {
    if (this.open?.kind !== kind) {
      const id = newId('msg')
      const index = this.opened(emit, messageItem(id, null, 'in_progress'))
      this.open = { kind, id, index, text: '' }
      emit({
        ...this.at(),
        content_index: 0,
        type: 'response.content_part.added',
        part: contentPart(kind, ''),
      })
    }
    this.open.text += text
    const type = kind === 'text' ? 'response.output_text.delta' : 'response.refusal.delta'
    emit({ ...this.at(), content_index: 0, type, delta: text, ...(kind === 'text' ? { logprobs: [] } : {}) })
  }

  /**
   * A chat tool-call delta. The first call streams as its item; the calls after it (another chat
   * `index` while one is open) are kept whole until the open one ends (text, the finish): chat
   * deltas may interleave by `index`, so a call is only known complete at the end, and an item
   * closed early would be split in two (its arguments under an invented id).
   */
  private toolCallDelta(call: ToolCallDelta, emit: Emit): void {
    const open = this.open
    if (open?.kind === 'call' && open.chatIndex === call.index) {
      this.appendArgs(call, emit)
      return
    }
    if (open?.kind === 'call' || this.later.has(call.index)) {
      let kept = this.later.get(call.index)
      if (!kept) {
        kept = { callId: call.id ?? newId('call'), name: '', args: '' }
        this.later.set(call.index, kept)
      }
      if (call.function?.name && !kept.name) kept.name = call.function.name
      kept.args += call.function?.arguments ?? ''
      return
    }
    const id = newId('fc')
    const callId = call.id ?? newId('call')
    const name = call.function?.name ?? ''
    const item = functionCallItem(id, callTo(callId, name, ''), this.namespaces, 'in_progress')
    const index = this.opened(emit, item)
    this.open = { kind: 'call', id, index, callId, name, args: '', chatIndex: call.index }
    this.appendArgs(call, emit)
  }

  /** The calls kept whole (`toolCallDelta`), each as a finished item; the last one `status`. */
  private flushLater(emit: Emit, status: 'completed' | 'incomplete'): void {
    const later = [...this.later]
    this.later.clear()
    later.forEach(([chatIndex, c], i) => {
      const id = newId('fc')
      const index = this.output.length
      emit({
        type: 'response.output_item.added',
        output_index: index,
        item: functionCallItem(id, callTo(c.callId, c.name, ''), this.namespaces, 'in_progress'),
      })
      this.open = { kind: 'call', id, index, callId: c.callId, name: c.name, args: c.args, chatIndex }
      if (c.args) emit({ ...this.at(), type: 'response.function_call_arguments.delta', delta: c.args })
      this.close(emit, i === later.length - 1 ? status : 'completed')
    })
  }

  private appendArgs(call: ToolCallDelta, emit: Emit): void {
    const open = this.open
    const args = call.function?.arguments
    if (open?.kind !== 'call' || !args) return
    open.args += args
    emit({ ...this.at(), type: 'response.function_call_arguments.delta', delta: args })
  }

  /** `item_id` and `output_index` of the open item. */
  private at(): { item_id: string; output_index: number } {
    return { item_id: this.open!.id, output_index: this.open!.index }
  }

  /**
   * Ends the open item: its `.done` events, then `output_item.done` with the whole item — and
   * after a call, the calls kept whole behind it (the last of all gets `status`).
   */
  private close(emit: Emit, status: 'completed' | 'incomplete' = 'completed'): void {
    const open = this.open
    if (!open) return
    if (open.kind === 'call' && this.later.size > 0) {
      this.closeOne(emit, 'completed')
      this.flushLater(emit, status)
      return
    }
    this.closeOne(emit, status)
  }

  private closeOne(emit: Emit, status: 'completed' | 'incomplete'): void {
    const open = this.open
    if (!open) return
    let item: OutputItem
    const at = this.at()
    if (open.kind === 'reasoning') {
      emit({ ...at, summary_index: 0, type: 'response.reasoning_summary_text.done', text: open.text })
      emit({
        ...at,
        summary_index: 0,
        type: 'response.reasoning_summary_part.done',
        part: summaryPart(open.text),
      })
      item = reasoningItem(open.id, open.text)
    } else if (open.kind === 'call') {
      emit({ ...at, type: 'response.function_call_arguments.done', name: open.name, arguments: open.args })
      const call = callTo(open.callId, open.name, open.args)
      item = functionCallItem(open.id, call, this.namespaces, status)
    } else {
      const part = contentPart(open.kind, open.text)
      if (open.kind === 'text') {
        emit({ ...at, content_index: 0, type: 'response.output_text.done', text: open.text, logprobs: [] })
      } else {
        emit({ ...at, content_index: 0, type: 'response.refusal.done', refusal: open.text })
      }
      emit({ ...at, content_index: 0, type: 'response.content_part.done', part })
      item = messageItem(open.id, part, status)
    }
    emit({ type: 'response.output_item.done', output_index: open.index, item })
    this.output.push(item)
    this.open = null
  }
}

const summaryPart = (text: string) => ({ type: 'summary_text', text })

const contentPart = (kind: 'text' | 'refusal', text: string) =>
  kind === 'text' ? outputText(text) : { type: 'refusal', refusal: text }

const callTo = (id: string, name: string, args: string) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: args },
})
