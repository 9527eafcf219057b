/**
 * @module
 * OpenAI usage → Anthropic's: `input_tokens` excludes cached prompt tokens, which Anthropic
 * reports as `cache_read_input_tokens`, and cache writes, `cache_creation_input_tokens`; reasoning
 * tokens (inside the output) are `output_tokens_details.thinking_tokens` (the inverse of
 * `convert-anthropic-usage.ts`).
 */
import type { Usage } from '../../operations/chat.ts'

export interface MessagesUsage {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
  /** How many of `output_tokens` were reasoning, when the upstream said. */
  output_tokens_details?: { thinking_tokens: number }
}

export function toMessagesUsage(usage: Usage | null | undefined): MessagesUsage {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0
  const written = usage?.prompt_tokens_details?.cache_write_tokens ?? 0
  const out: MessagesUsage = {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached - written),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
  }
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens
  if (typeof reasoning === 'number') out.output_tokens_details = { thinking_tokens: reasoning }
  return out
}

/** `msg_…` from a chat completion id, so one answer keeps one id across both shapes. */
export function messageId(completionId: string): string {
  const bare = completionId.replace(/^chatcmpl-/, '').replace(/^msg_/, '')
  return `msg_${bare}`
}
