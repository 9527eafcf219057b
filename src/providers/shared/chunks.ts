/**
 * @module
 * Builders for the `chat.completion.chunk`s that native-protocol stream transforms emit.
 */
import type { ChatCompletionChunk, FinishReason, Usage } from '../../operations/chat.ts'

/** What every chunk of one stream shares. */
export interface ChunkHead {
  id: string
  created: number
  /** The upstream model name; the stream writer rewrites it to the prefixed id. */
  model: string
}

export type ChunkDelta = ChatCompletionChunk['choices'][number]['delta']

/**
 * @example
 * choiceChunk({ id: 'chatcmpl-1', created: 1, model: 'm' }, 0, { content: 'Hi' })
 * // { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] }
 */
export function choiceChunk(
  head: ChunkHead,
  index: number,
  delta: ChunkDelta,
  finish: FinishReason | null = null,
): ChatCompletionChunk {
  const { id, created, model } = head
  return {
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index, delta, finish_reason: finish }],
  }
}

/** The final `choices: []` chunk carrying the stream's usage (DESIGN §4, `include_usage`). */
export function usageChunk(head: ChunkHead, usage: Usage): ChatCompletionChunk {
  const { id, created, model } = head
  return { id, object: 'chat.completion.chunk', created, model, choices: [], usage }
}

/**
 * The deltas that open a choice, the role on the first of them as OpenAI sends it: a text answer
 * opens with `{role, content: ''}` on a chunk of its own; an answer that opens with a tool call
 * (or reasoning) carries the role on that delta with `content: null`. A client that reads `''` as
 * text (the AI SDK) would otherwise record an empty text part beside the calls.
 *
 * @example
 * openingDeltas({ content: 'Hi' }) // [{ role: 'assistant', content: '' }, { content: 'Hi' }]
 * openingDeltas({ tool_calls: [call] }) // [{ role: 'assistant', content: null, tool_calls: [call] }]
 */
export function openingDeltas(delta: ChunkDelta): ChunkDelta[] {
  if (typeof delta.content !== 'string') return [{ role: 'assistant', content: null, ...delta }]
  const role: ChunkDelta = { role: 'assistant', content: '' }
  return delta.content === '' ? [role] : [role, delta]
}
