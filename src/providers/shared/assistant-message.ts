/**
 * @module
 * The `message` of a non-stream choice, from the text and tool calls an adapter read.
 */
import type { ChatCompletion, ToolCall } from '../types.ts'

export type AssistantMessage = ChatCompletion['choices'][number]['message']

/**
 * `content` is `null` beside tool calls when there is no text, as OpenAI sends it; `tool_calls`
 * is present only when there are some.
 *
 * @example
 * assistantMessage('', [call]) // { role: 'assistant', content: null, refusal: null, tool_calls: [call] }
 */
export function assistantMessage(text: string, toolCalls: ToolCall[]): AssistantMessage {
  const message: AssistantMessage = {
    role: 'assistant',
    content: text !== '' || toolCalls.length === 0 ? text : null,
    refusal: null,
  }
  if (toolCalls.length) message.tool_calls = toolCalls
  return message
}
