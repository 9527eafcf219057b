/**
 * @module
 * Gemini `usageMetadata` → OpenAI `usage`.
 */
import type { Usage } from '../../operations/chat.ts'
import type { GeminiUsageMetadata } from './gemini-types.ts'

/**
 * Thinking tokens count as completion tokens, as OpenAI counts reasoning tokens inside
 * `completion_tokens`; they are also reported as `reasoning_tokens`. The tokens of Google's
 * built-in tools' results (`toolUsePromptTokenCount`: a search's pages, code execution's
 * output fed back) count as prompt tokens: Google bills them as input, and reports them apart
 * from `promptTokenCount` (both inside `totalTokenCount`).
 *
 * @example
 * convertGeminiUsage({ promptTokenCount: 9, candidatesTokenCount: 23, thoughtsTokenCount: 185, totalTokenCount: 217 })
 * // { prompt_tokens: 9, completion_tokens: 208, total_tokens: 217, ... }
 * convertGeminiUsage({ promptTokenCount: 151, toolUsePromptTokenCount: 18329, candidatesTokenCount: 1089, totalTokenCount: 19569 })
 * // { prompt_tokens: 18480, completion_tokens: 1089, total_tokens: 19569, ... }
 */
export function convertGeminiUsage(usage: GeminiUsageMetadata | undefined): Usage {
  const prompt = (usage?.promptTokenCount ?? 0) + (usage?.toolUsePromptTokenCount ?? 0)
  const reasoning = usage?.thoughtsTokenCount ?? 0
  const completion = (usage?.candidatesTokenCount ?? 0) + reasoning
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage?.totalTokenCount ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: usage?.cachedContentTokenCount ?? 0 },
    completion_tokens_details: { reasoning_tokens: reasoning },
  }
}
