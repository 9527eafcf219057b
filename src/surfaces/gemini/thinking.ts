/**
 * @module
 * Gemini's `generationConfig.thinkingConfig` → the canonical `reasoning_effort`, the setting every
 * surface's reasoning request becomes; each adapter turns it into its own wire's thinking within
 * the target model's limits (Anthropic's `budget_tokens` below `max_tokens`, OpenAI's effort,
 * Gemini's budgets), so a budget over the target's maximum ends clamped there.
 *
 * - `thinkingBudget`: 0 → `none` (thinking off; a model that always reasons refuses it by name);
 *   -1 (dynamic) → `medium`; otherwise by size as the Messages surface reads `budget_tokens`:
 *   under 4,096 `low`, under 16,384 `medium`, else `high`.
 * - `thinkingLevel` (Gemini 3): `minimal`, `low`, `medium`, `high` as the same efforts.
 * - `includeThoughts` alone asks for thought summaries where the model thinks anyway (Gemini CLI
 *   sends it on every turn): no effort, so a model without reasoning still answers it. The answer
 *   carries the reasoning as `thought: true` parts only when it is set.
 */
import type { ReasoningEffort } from '../../providers/shared/reasoning-effort.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'

export interface ThinkingConfigIn {
  thinkingBudget?: number
  includeThoughts?: boolean
  thinkingLevel?: string
}

const LEVELS = new Set(['minimal', 'low', 'medium', 'high'])

/**
 * @example
 * reasoningEffortOf({ thinkingBudget: 8192 })       // 'medium'
 * reasoningEffortOf({ thinkingBudget: 0 })          // 'none'
 * reasoningEffortOf({ includeThoughts: true })      // undefined
 */
export function reasoningEffortOf(config: ThinkingConfigIn | undefined): ReasoningEffort | undefined {
  if (!config) return undefined
  const { thinkingBudget: budget, thinkingLevel } = config
  const level =
    thinkingLevel === undefined || thinkingLevel === 'THINKING_LEVEL_UNSPECIFIED'
      ? undefined
      : thinkingLevel.toLowerCase()
  if (budget !== undefined && level !== undefined)
    throw new GatewayError(
      400,
      'invalid_value',
      'generationConfig.thinkingConfig: send thinkingBudget or thinkingLevel, not both.',
      { param: 'generationConfig.thinkingConfig.thinkingLevel' },
    )
  if (level !== undefined) {
    if (!LEVELS.has(level))
      throw new GatewayError(
        400,
        'invalid_value',
        `generationConfig.thinkingConfig.thinkingLevel "${clip(thinkingLevel!)}" is not one of MINIMAL, LOW, MEDIUM, HIGH.`,
        { param: 'generationConfig.thinkingConfig.thinkingLevel' },
      )
    return level as ReasoningEffort
  }
  if (budget === undefined) return undefined
  if (budget === 0) return 'none'
  if (budget < 0) return 'medium'
  return budget < 4096 ? 'low' : budget < 16_384 ? 'medium' : 'high'
}

/** The request asks the model to think (the `reasoning` feature): a budget above 0, dynamic, or a level. */
export function asksReasoning(config: ThinkingConfigIn | undefined): string | null {
  if (!config) return null
  if (config.thinkingLevel !== undefined && config.thinkingLevel !== 'THINKING_LEVEL_UNSPECIFIED')
    return 'generationConfig.thinkingConfig.thinkingLevel'
  if (config.thinkingBudget !== undefined && config.thinkingBudget !== 0)
    return 'generationConfig.thinkingConfig.thinkingBudget'
  return null
}
