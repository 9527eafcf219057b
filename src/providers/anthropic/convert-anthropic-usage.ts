/**
 * @module
 * Anthropic token counts → OpenAI `usage`.
 */
import type { Usage } from '../../operations/chat.ts'
import type { AnthropicUsage } from './anthropic-types.ts'

/**
 * Anthropic's `input_tokens` excludes cached input, so the prompt is the sum of the three input
 * counts; cache reads are reported as OpenAI's `cached_tokens`, cache writes (when there are any)
 * as `cache_write_tokens`, which the model's `cache_write` price bills (limits/pricing.ts).
 * `output_tokens_details.thinking_tokens` (inside `output_tokens`, when Anthropic reports it)
 * becomes `completion_tokens_details.reasoning_tokens`, which the `reasoning` price bills.
 *
 * @example
 * convertAnthropicUsage({ input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 5 })
 * // { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105, prompt_tokens_details: { cached_tokens: 90 } }
 */
export function convertAnthropicUsage(usage: AnthropicUsage | undefined): Usage {
  const cached = usage?.cache_read_input_tokens ?? 0
  const written = usage?.cache_creation_input_tokens ?? 0
  const prompt = (usage?.input_tokens ?? 0) + written + cached
  const completion = usage?.output_tokens ?? 0
  const out: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: written
      ? { cached_tokens: cached, cache_write_tokens: written }
      : { cached_tokens: cached },
  }
  const thinking = usage?.output_tokens_details?.thinking_tokens
  if (typeof thinking === 'number') out.completion_tokens_details = { reasoning_tokens: thinking }
  return out
}

/** Later events repeat or update counts (message_delta's `output_tokens` is cumulative). */
export function mergeUsage(into: AnthropicUsage, from: AnthropicUsage | undefined): void {
  if (!from) return
  for (const key of [
    'input_tokens',
    'output_tokens',
    'cache_creation_input_tokens',
    'cache_read_input_tokens',
  ] as const) {
    const value = from[key]
    if (typeof value === 'number') into[key] = value
  }
  const thinking = from.output_tokens_details?.thinking_tokens
  if (typeof thinking === 'number') into.output_tokens_details = { thinking_tokens: thinking }
}
