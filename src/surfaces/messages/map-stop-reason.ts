/**
 * @module
 * OpenAI `finish_reason` → Anthropic `stop_reason` (the inverse of
 * `providers/anthropic/map-anthropic-stop-reason.ts`). A stop caused by one of the request's
 * `stop_sequences` cannot be told apart from a natural end in chat terms, so both are `end_turn`.
 * An answer that was a refusal (OpenAI's `refusal` text, which ends with `stop`) is `refusal`, as
 * Claude reports declining; one cut at the token limit stays `max_tokens`.
 */
import type { FinishReason } from '../../operations/chat.ts'

const STOP_REASONS: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
}

export function mapFinishReason(reason: FinishReason | null | undefined, refused = false): string {
  if (refused && reason !== 'length') return 'refusal'
  return (reason && STOP_REASONS[reason]) || 'end_turn'
}
