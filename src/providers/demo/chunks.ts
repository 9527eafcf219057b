/**
 * @module
 * The demo answer as OpenAI would stream it: per choice the role first, then word-sized content
 * deltas (or tool-call deltas: id, type and name first, then argument fragments), then the
 * finish_reason; finally a `choices: []` chunk with usage.
 */
import type { ChatCompletionChunk, ToolCall, Usage } from '../types.ts'
import type { DemoAnswer } from './answer.ts'

export interface ChunkHead {
  id: string
  created: number
  model: string
}

type Choice = ChatCompletionChunk['choices'][number]
type Delta = Choice['delta']

const ARGUMENT_FRAGMENT = 8

export function demoChunks(
  head: ChunkHead,
  answer: DemoAnswer,
  n: number,
  usage: Usage,
): ChatCompletionChunk[] {
  const chunks: ChatCompletionChunk[] = []
  const push = (choices: Choice[], extra?: { usage: Usage }): void => {
    chunks.push({
      id: head.id,
      object: 'chat.completion.chunk',
      created: head.created,
      model: head.model,
      choices,
      ...extra,
    })
  }
  const delta = (index: number, d: Delta, finish: Choice['finish_reason'] = null): Choice[] => [
    { index, delta: d, logprobs: null, finish_reason: finish },
  ]
  for (let index = 0; index < n; index++) {
    if (answer.toolCalls.length > 0) {
      answer.toolCalls.forEach((call, i) => {
        const first = {
          index: i,
          id: call.id,
          type: 'function' as const,
          function: { name: call.function.name, arguments: '' },
        }
        push(
          delta(
            index,
            i === 0 ? { role: 'assistant', content: null, tool_calls: [first] } : { tool_calls: [first] },
          ),
        )
        for (const part of fragments(call))
          push(delta(index, { tool_calls: [{ index: i, function: { arguments: part } }] }))
      })
    } else {
      push(delta(index, { role: 'assistant', content: '' }))
      for (const word of words(answer.content ?? '')) push(delta(index, { content: word }))
    }
    push(delta(index, {}, answer.finishReason))
  }
  push([], { usage })
  return chunks
}

/** Words with their trailing whitespace; joined they give back `text` exactly. */
export function words(text: string): string[] {
  const parts = text.match(/\s*\S+\s*/g)
  return parts ?? (text ? [text] : [])
}

function fragments(call: ToolCall): string[] {
  const args = call.function.arguments
  const out: string[] = []
  for (let at = 0; at < args.length; at += ARGUMENT_FRAGMENT) out.push(args.slice(at, at + ARGUMENT_FRAGMENT))
  return out
}
