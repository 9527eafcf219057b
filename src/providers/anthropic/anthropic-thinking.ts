/**
 * @module
 * `reasoning_effort` → Anthropic's extended thinking (`thinking: {type: 'enabled', budget_tokens}`),
 * and the request rules Anthropic holds a thinking request to.
 *
 * Budgets follow Google's published mapping of OpenAI efforts to thinking budgets (low 1K, medium
 * 8K, high 24K), which also falls in the Messages surface's reading of a budget (< 4,096 low,
 * < 16,384 medium, else high), so an effort comes back as itself. `minimal` is Anthropic's floor
 * (1,024); `xhigh` is 32,000, the most Anthropic advises for a request that is not batched.
 *
 * Anthropic wants 1,024 ≤ `budget_tokens` < `max_tokens`, and `max_tokens` covers thinking and
 * answer alike (as OpenAI's `max_completion_tokens` covers reasoning). `max_tokens` is never
 * raised: it is the client's cap, or the output allowance the gateway reserved against the
 * account's token limits and budget. The budget is lowered instead, to three quarters of
 * `max_tokens` (a quarter is left for the answer), never below 1,024; a `max_tokens` of 1,024 or
 * less leaves no room to think: 400.
 */
import type { ChatRequest } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { type ThinkingEffort, thinkingEffort } from '../shared/reasoning-effort.ts'
import type { AnthropicThinking } from './anthropic-types.ts'

/** `budget_tokens` per effort, before it is fitted under `max_tokens`. */
const ANTHROPIC_THINKING_BUDGETS: Readonly<Record<ThinkingEffort, number>> = {
  minimal: 1024,
  low: 1024,
  medium: 8192,
  high: 24_576,
  xhigh: 32_000,
}

/** Anthropic's least `budget_tokens`. */
export const MIN_THINKING_BUDGET = 1024

/**
 * Whether the request continues a tool loop: its last assistant message called tools and only
 * their results follow. Anthropic wants that turn to start with the signed thinking block it
 * began with, which a translated history cannot carry (signatures are not kept), so the request
 * goes without thinking — as Anthropic itself treats a turn that began without it.
 */
function inToolLoop(req: ChatRequest): boolean {
  const m = req.messages
  for (let i = m.length - 1; i >= 0; i--) {
    const msg = m[i]!
    if (msg.role === 'tool') continue
    return msg.role === 'assistant' && (msg.tool_calls?.length ?? 0) > 0
  }
  return false
}

/**
 * Whether the request thinks: it asks to (`reasoning_effort`) and does not continue a tool loop
 * (an adapter rule's `when`: what Anthropic refuses beside thinking).
 */
export const thinks = (req: ChatRequest): boolean => thinkingEffort(req) !== undefined && !inToolLoop(req)

/**
 * Whether the request asks to think but goes without (it continues a tool loop): the effort is
 * left out, and named as dropped (`../unserved-params.ts`).
 */
export const thinkingLeftOut = (req: ChatRequest): boolean =>
  thinkingEffort(req) !== undefined && inToolLoop(req)

/**
 * @param maxTokens the `max_tokens` the Anthropic body carries.
 * @example
 * anthropicThinking({ ...req, reasoning_effort: 'high' }, 64_000) // { type: 'enabled', budget_tokens: 24576 }
 * anthropicThinking({ ...req, reasoning_effort: 'high' }, 4096)   // { type: 'enabled', budget_tokens: 3072 }
 * anthropicThinking({ ...req, reasoning_effort: 'none' }, 4096)   // undefined
 */
export function anthropicThinking(req: ChatRequest, maxTokens: number): AnthropicThinking | undefined {
  const effort = thinkingEffort(req)
  if (effort === undefined || inToolLoop(req)) return undefined
  if (maxTokens <= MIN_THINKING_BUDGET) {
    const field = req.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens'
    throw new GatewayError(
      400,
      'invalid_value',
      `${field} is ${maxTokens}, which leaves no room to think: Anthropic models think within the output limit, with a budget of at least ${MIN_THINKING_BUDGET} tokens below it. Send more than ${MIN_THINKING_BUDGET}, or ask for no reasoning.`,
      { param: field },
    )
  }
  const fitted = Math.min(ANTHROPIC_THINKING_BUDGETS[effort], Math.floor((maxTokens * 3) / 4))
  return { type: 'enabled', budget_tokens: Math.max(MIN_THINKING_BUDGET, fitted) }
}
