/**
 * @module
 * Anthropic `stop_reason` → OpenAI `finish_reason`.
 */
import type { FinishReason } from '../../operations/chat.ts'

const STOP_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // A server tool loop paused; the turn is over from the client's point of view.
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
}

/** Unknown or missing reasons read as `stop`: the message did end. */
export function mapAnthropicStopReason(reason: string | null | undefined): FinishReason {
  return (reason && STOP_REASONS[reason]) || 'stop'
}
