/**
 * @module
 * Gemini `finishReason` → OpenAI `finish_reason`.
 */
import type { FinishReason } from '../../operations/chat.ts'

const BLOCKED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY'])

/**
 * Gemini ends a function call with `STOP` like any other answer, so the caller says whether the
 * candidate called functions. Unknown and other reasons (`OTHER`, `LANGUAGE`,
 * `MALFORMED_FUNCTION_CALL`, …) read as `stop`: the answer did end.
 *
 * @example
 * mapGeminiFinishReason('STOP', true) // 'tool_calls'
 */
export function mapGeminiFinishReason(reason: string | undefined, calledFunctions: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length'
  if (reason && BLOCKED.has(reason)) return 'content_filter'
  return calledFunctions ? 'tool_calls' : 'stop'
}
