/**
 * @module
 * `reasoning_effort` → Gemini's `generationConfig.thinkingConfig`.
 *
 * Budgets are Google's own mapping of OpenAI efforts for its OpenAI-compatible endpoint (minimal
 * and low 1,024, medium 8,192, high 24,576). `xhigh` is 24,576 too: the most every Gemini 2.5
 * model takes (Flash's ceiling). `none` is a budget of 0, which turns thinking off
 * (Gemini 2.5 Flash thinks by default); a model that cannot (Gemini 2.5 Pro refuses it: "Budget 0
 * is invalid") is configured `always_reasons`, and "none" is refused before admission
 * (`catalogue/features.ts`).
 * `thinkingBudget` is what Gemini 2.5 reads; Gemini 3 accepts it for compatibility (its own knob,
 * `thinkingLevel`, is refused by 2.5 and differs per model, so it is not sent). `includeThoughts`
 * asks for thought summaries, which come back as `reasoning_content`.
 */
import { parseEffort, type ReasoningEffort } from '../shared/reasoning-effort.ts'
import type { GeminiThinkingConfig } from './gemini-types.ts'

const GEMINI_THINKING_BUDGETS: Readonly<Record<Exclude<ReasoningEffort, 'none'>, number>> = {
  minimal: 1024,
  low: 1024,
  medium: 8192,
  high: 24_576,
  xhigh: 24_576,
}

/**
 * @example
 * geminiThinkingConfig('medium') // { thinkingBudget: 8192, includeThoughts: true }
 * geminiThinkingConfig('none')   // { thinkingBudget: 0 }: thinking off, no thoughts to show
 */
export function geminiThinkingConfig(value: unknown): GeminiThinkingConfig {
  const effort = parseEffort(value)
  if (effort === 'none') return { thinkingBudget: 0 }
  return { thinkingBudget: GEMINI_THINKING_BUDGETS[effort], includeThoughts: true }
}
