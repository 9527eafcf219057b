/**
 * @module
 * A chat completion from a translating provider → an Anthropic `message` response: reasoning
 * text (where a compatible server sends `reasoning_content`) as a `thinking` block, the text (a
 * refusal's text too: Claude's refusals are text with `stop_reason: refusal`), then one `tool_use`
 * block per tool call.
 */
import type { ChatCompletion } from '../../operations/chat.ts'
import { messageId, toMessagesUsage } from './convert-usage.ts'
import { mapFinishReason } from './map-stop-reason.ts'

export function convertFromCompletion(completion: ChatCompletion, modelId: string) {
  const choice = completion.choices[0]
  const message = choice?.message
  const content: Array<Record<string, unknown>> = []
  const reasoning = message?.reasoning_content ?? message?.reasoning
  if (typeof reasoning === 'string' && reasoning) {
    content.push({ type: 'thinking', thinking: reasoning, signature: '' })
  }
  const refusal = typeof message?.refusal === 'string' ? message.refusal : ''
  const text = (message?.content ?? '') + refusal
  if (text) content.push({ type: 'text', text })
  for (const call of message?.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseInput(call.function.arguments),
    })
  }
  return {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model: modelId,
    content,
    stop_reason: mapFinishReason(choice?.finish_reason, refusal !== ''),
    stop_sequence: null,
    usage: toMessagesUsage(completion.usage),
  }
}

/** Tool arguments are a JSON string in chat; a model that wrote broken JSON gets its text kept. */
export function parseInput(args: string): Record<string, unknown> {
  if (!args) return {}
  try {
    const value: unknown = JSON.parse(args)
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return value as Record<string, unknown>
  } catch {}
  return { _raw_arguments: args }
}
