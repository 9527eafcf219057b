/**
 * @module
 * An Anthropic Messages response → an OpenAI `chat.completion`.
 */
import type { ChatCompletion, ToolCall } from '../../operations/chat.ts'
import { assistantMessage } from '../shared/assistant-message.ts'
import type { AnthropicResponse } from './anthropic-types.ts'
import { convertAnthropicUsage } from './convert-anthropic-usage.ts'
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.ts'

/** `chatcmpl-<Anthropic message id>`: OpenAI-looking, and still traceable in Anthropic's logs. */
export function completionId(messageId: string): string {
  return `chatcmpl-${messageId}`
}

/**
 * Text blocks are concatenated into `content`; `thinking` blocks into `reasoning_content` (their
 * signatures are dropped: only Anthropic can read them, and chat has no place for them);
 * `tool_use` blocks become `tool_calls` whose `arguments` is the JSON of their `input`.
 * `redacted_thinking` and other blocks are skipped.
 *
 * @param model the model name to report (the gateway rewrites it to the prefixed id).
 */
export function convertAnthropicResponse(res: AnthropicResponse, model: string): ChatCompletion {
  let text = ''
  let thinking = ''
  const toolCalls: ToolCall[] = []
  for (const block of res.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') {
      text += block.text
    } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      thinking += block.thinking
    } else if (block.type === 'tool_use') {
      toolCalls.push({
        id: String(block.id),
        type: 'function',
        function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
      })
    }
  }
  const message = assistantMessage(text, toolCalls, thinking)
  return {
    id: completionId(res.id),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: mapAnthropicStopReason(res.stop_reason), logprobs: null }],
    usage: convertAnthropicUsage(res.usage),
  }
}
