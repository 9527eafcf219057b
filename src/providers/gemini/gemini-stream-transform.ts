/**
 * @module
 * Gemini `streamGenerateContent?alt=sse` events → OpenAI `chat.completion.chunk`s, as a
 * `TransformStream` whose state (id, per-choice progress, last usage) lives inside the stream.
 *
 * Every event is a whole `GenerateContentResponse` holding the next slice of each candidate:
 * - a choice opens as OpenAI's do (`openingDeltas`): `{role: 'assistant', content: ''}` before its
 *   first text, the role with `content: null` on its first tool call or reasoning delta (a
 *   candidate with nothing in it opens with `content: ''` when it finishes);
 * - thought summaries (`thought: true` text parts) → `reasoning_content` deltas; other text
 *   parts → content deltas;
 * - each `functionCall` part → one complete tool call delta (id, name, whole `arguments`), with
 *   `index` counting that choice's calls in order of appearance across the stream;
 * - `finishReason` and `usageMetadata` are remembered; when the upstream ends, each choice gets
 *   its `finish_reason` chunk, then one `choices: []` chunk carries the last usage;
 * - an `{error: …}` event errors the stream with a `GatewayError` (map-gemini-error).
 */
import type { ProviderConfig } from '../../config/schema.ts'
import type { ChatCompletionChunk, FinishReason } from '../../operations/chat.ts'
import { streamInterrupted } from '../http.ts'
import { type ChunkDelta, type ChunkHead, choiceChunk, openingDeltas, usageChunk } from '../shared/chunks.ts'
import { parseJsonEvent } from '../shared/parse-json-event.ts'
import { isJson, type SSEEvent } from '../sse/index.ts'
import { completionId } from './convert-gemini-response.ts'
import { convertGeminiUsage } from './convert-gemini-usage.ts'
import type { GeminiErrorBody, GeminiResponse, GeminiUsageMetadata } from './gemini-types.ts'
import { mapGeminiError } from './map-gemini-error.ts'
import { mapGeminiFinishReason } from './map-gemini-finish-reason.ts'
import { readGeminiParts } from './read-gemini-parts.ts'

interface ChoiceState {
  toolCalls: number
  /** The choice's role delta went out. */
  opened: boolean
  finishReason?: string
}

/**
 * @param model the model name to report in chunks (the gateway rewrites it to the prefixed id).
 * @example
 * parseSSE(res.body).pipeThrough(geminiStreamTransform({ model: 'gemini-2.5-flash', provider }))
 */
export function geminiStreamTransform(opts: {
  model: string
  provider: ProviderConfig
}): TransformStream<SSEEvent, ChatCompletionChunk> {
  return new TransformStream(geminiStreamTransformer(opts))
}

/** The same as a transformer object, for a `StreamPlan` stage (state in the closure: one per stream). */
export function geminiStreamTransformer(opts: {
  model: string
  provider: ProviderConfig
  /** An event that was not JSON was skipped (DESIGN §10: skipped and counted, never passed on). */
  onMalformed?: () => void
}): Transformer<SSEEvent, ChatCompletionChunk> {
  const created = Math.floor(Date.now() / 1000)
  let head: ChunkHead | undefined
  let usage: GeminiUsageMetadata | undefined
  let blocked = false
  let skipped = 0
  const choices = new Map<number, ChoiceState>()

  const chunk = (index: number, delta: ChunkDelta, finish: FinishReason | null = null) =>
    choiceChunk(head!, index, delta, finish)
  const emit = (
    controller: TransformStreamDefaultController<ChatCompletionChunk>,
    index: number,
    state: ChoiceState,
    delta: ChunkDelta,
  ) => {
    if (state.opened) return controller.enqueue(chunk(index, delta))
    state.opened = true
    for (const d of openingDeltas(delta)) controller.enqueue(chunk(index, d))
  }

  return {
    transform(sse, controller) {
      if (!isJson(sse.data)) {
        skipped++
        opts.onMalformed?.()
        return
      }
      const event = parseJsonEvent(sse, opts.provider.prefix) as GeminiResponse | GeminiErrorBody
      if ('error' in event && event.error) throw mapGeminiError(event as GeminiErrorBody, opts.provider)
      const res = event as GeminiResponse
      head ??= { id: completionId(res.responseId), created, model: opts.model }
      if (res.usageMetadata) usage = res.usageMetadata
      if (res.promptFeedback?.blockReason) blocked = true

      for (const [position, candidate] of (res.candidates ?? []).entries()) {
        const index = candidate.index ?? position
        let state = choices.get(index)
        if (!state) {
          state = { toolCalls: 0, opened: false }
          choices.set(index, state)
        }
        const { text, reasoning, toolCalls } = readGeminiParts(candidate.content?.parts)
        if (reasoning !== '') emit(controller, index, state, { reasoning_content: reasoning })
        if (text !== '') emit(controller, index, state, { content: text })
        for (const call of toolCalls) {
          emit(controller, index, state, { tool_calls: [{ index: state.toolCalls++, ...call }] })
        }
        if (candidate.finishReason) state.finishReason = candidate.finishReason
      }
    },
    flush(controller) {
      if (!head) {
        // Nothing but events that were not JSON: not the protocol at all.
        if (skipped > 0) parseJsonEvent({ data: 'not JSON' }, opts.provider.prefix)
        throw streamInterrupted(opts.provider.prefix, 'the stream ended without any event')
      }
      if (choices.size === 0 && blocked) {
        // A blocked prompt: no candidate at all, reported as OpenAI reports filtering — an answer
        // with no text (`content: null`, as `convertGeminiResponse` gives), then content_filter.
        const state: ChoiceState = { toolCalls: 0, opened: false, finishReason: 'PROHIBITED_CONTENT' }
        emit(controller, 0, state, { content: null })
        choices.set(0, state)
      }
      const ordered = [...choices.entries()].sort(([a], [b]) => a - b)
      if (ordered.length === 0 || ordered.some(([, state]) => !state.finishReason)) {
        throw streamInterrupted(opts.provider.prefix, 'the stream ended before a finishReason')
      }
      for (const [index, state] of ordered) {
        if (!state.opened) emit(controller, index, state, { content: '' })
        controller.enqueue(chunk(index, {}, mapGeminiFinishReason(state.finishReason, state.toolCalls > 0)))
      }
      controller.enqueue(usageChunk(head, convertGeminiUsage(usage)))
    },
  }
}
