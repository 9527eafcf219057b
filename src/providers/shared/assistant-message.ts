/**
 * @module
 * The `message` of a non-stream choice, from the text and tool calls an adapter read.
 */
import type { ChatCompletion, ToolCall } from '../../operations/chat.ts'

export type AssistantMessage = ChatCompletion['choices'][number]['message']

/**
 * `content` is `null` beside tool calls when there is no text, as OpenAI sends it; `tool_calls`
 * is present only when there are some; the model's reasoning text, when it gave some, is
 * `reasoning_content` (what OpenAI-compatible servers call it, and what every surface reads).
 *
 * @example
 * assistantMessage('', [call]) // { role: 'assistant', content: null, refusal: null, tool_calls: [call] }
 * assistantMessage('185', [], '925 / 5') // { role: 'assistant', content: '185', reasoning_content: '925 / 5', refusal: null }
 */
export function assistantMessage(text: string, toolCalls: ToolCall[], reasoning = ''): AssistantMessage {
  const message: AssistantMessage = {
    role: 'assistant',
    content: text !== '' || toolCalls.length === 0 ? text : null,
    ...(reasoning !== '' ? { reasoning_content: reasoning } : {}),
    refusal: null,
  }
  if (toolCalls.length) message.tool_calls = toolCalls
  return message
}
