/**
 * @module
 * The canonical request's `reasoning_effort` — what every surface's reasoning request becomes
 * (chat `reasoning_effort`, Responses `reasoning.effort`, Messages `thinking`) — read for the
 * adapters that must turn it into their own wire's thinking settings.
 */
import type { ChatRequest } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'

/** OpenAI's `reasoning_effort` values, weakest first. */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number]
/** An effort that asks the model to think. */
export type ThinkingEffort = Exclude<ReasoningEffort, 'none'>

/**
 * A `reasoning_effort` value, checked: an unknown one is a 400 naming it (chat passes the field
 * on unvalidated, since OpenAI-compatible servers may know more values; an adapter that maps it
 * must not guess).
 *
 * @example
 * parseEffort('high') // 'high'
 * parseEffort('max')  // throws 400 invalid_value, param reasoning_effort
 */
export function parseEffort(value: unknown): ReasoningEffort {
  if ((REASONING_EFFORTS as readonly unknown[]).includes(value)) return value as ReasoningEffort
  throw new GatewayError(
    400,
    'invalid_value',
    `reasoning_effort ${clip(String(JSON.stringify(value)))} is not one this model's provider understands. Send one of ${REASONING_EFFORTS.map((e) => `"${e}"`).join(', ')}.`,
    { param: 'reasoning_effort' },
  )
}

/** The effort the request asks the model to think with; undefined when it asks none (absent or `none`). */
export function thinkingEffort(req: ChatRequest): ThinkingEffort | undefined {
  const value = req.reasoning_effort
  if (value === undefined || value === null) return undefined
  const effort = parseEffort(value)
  return effort === 'none' ? undefined : effort
}
