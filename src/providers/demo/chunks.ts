/**
 * @module
 * The demo answer as OpenAI would stream it: per choice the role first, then word-sized content
 * deltas (each word with the space before it, as a byte-pair token has it: `words`) (or tool-call deltas: id, type and name first, then argument fragments), then the
 * finish_reason; finally a `choices: []` chunk with usage. Made one at a time as the stream is read
 * (a generator), so a stream holds one chunk, not the whole answer cut into objects.
 */
import type { ChatCompletionChunk, ToolCall, Usage } from '../../operations/chat.ts'
import type { DemoAnswer } from './answer.ts'
import { words } from './text.ts'

export interface ChunkHead {
  id: string
  created: number
  model: string
}

type Choice = ChatCompletionChunk['choices'][number]
type Delta = Choice['delta']

const ARGUMENT_FRAGMENT = 8

export function* demoChunks(
  head: ChunkHead,
  answer: DemoAnswer,
  n: number,
  usage: Usage,
): Generator<ChatCompletionChunk> {
  const chunk = (choices: Choice[], extra?: { usage: Usage }): ChatCompletionChunk => ({
    id: head.id,
    object: 'chat.completion.chunk',
    created: head.created,
    model: head.model,
    choices,
    ...extra,
  })
  const delta = (index: number, d: Delta, finish: Choice['finish_reason'] = null): Choice[] => [
    { index, delta: d, logprobs: null, finish_reason: finish },
  ]
  for (let index = 0; index < n; index++) {
    if (answer.toolCalls.length > 0) {
      for (const [i, call] of answer.toolCalls.entries()) {
        const first = {
          index: i,
          id: call.id,
          type: 'function' as const,
          function: { name: call.function.name, arguments: '' },
        }
        yield chunk(
          delta(
            index,
            i === 0 ? { role: 'assistant', content: null, tool_calls: [first] } : { tool_calls: [first] },
          ),
        )
        for (const part of fragments(call))
          yield chunk(delta(index, { tool_calls: [{ index: i, function: { arguments: part } }] }))
      }
    } else {
      yield chunk(delta(index, { role: 'assistant', content: '' }))
      for (const word of words(answer.content ?? '')) yield chunk(delta(index, { content: word }))
    }
    yield chunk(delta(index, {}, answer.finishReason))
  }
  yield chunk([], { usage })
}

function* fragments(call: ToolCall): Generator<string> {
  const args = call.function.arguments
  for (let at = 0; at < args.length; at += ARGUMENT_FRAGMENT) yield args.slice(at, at + ARGUMENT_FRAGMENT)
}
