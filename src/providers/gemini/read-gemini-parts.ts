/**
 * @module
 * The answer inside a candidate's `parts`: visible text, thought summaries and function calls.
 */
import type { ToolCall } from '../../operations/chat.ts'
import type { GeminiPart } from './gemini-types.ts'
import { toolCallId } from './tool-call-ids.ts'

/**
 * Text parts are joined; so are thought summaries (`thought: true`, sent with `includeThoughts`),
 * apart, as `reasoning`; each `functionCall` becomes a tool call with a fresh id carrying the
 * part's thought signature and the whole `args` as JSON.
 *
 * @example
 * readGeminiParts([{ text: 'Hi' }, { functionCall: { name: 'f', args: { a: 1 } } }])
 * // { text: 'Hi', reasoning: '', toolCalls: [{ id: 'call_…', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }
 */
export function readGeminiParts(parts: GeminiPart[] | undefined): {
  text: string
  reasoning: string
  toolCalls: ToolCall[]
} {
  let text = ''
  let reasoning = ''
  const toolCalls: ToolCall[] = []
  for (const part of parts ?? []) {
    if (part.thought) {
      if (typeof part.text === 'string') reasoning += part.text
      continue
    }
    if (typeof part.text === 'string') text += part.text
    if (part.functionCall) {
      toolCalls.push({
        id: toolCallId(part.thoughtSignature),
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      })
    }
  }
  return { text, reasoning, toolCalls }
}
