/**
 * Prompt-cache writes are billed at the model's `cache_write` price (DESIGN §11: cached input
 * priced as the provider bills it): Anthropic reports them as `cache_creation_input_tokens`, the
 * Responses API as `input_tokens_details.cache_write_tokens`. Each is kept apart in the usage
 * every adapter maps to, so the cost sees them, and given back on each surface as it was reported.
 * They were folded into plain input: 5 written tokens priced at `input`, the Responses surface
 * reporting `cache_write_tokens: 0`.
 */
import { describe, expect, test } from 'bun:test'
import type { ModelConfig } from '../../src/config/schema.ts'
import { modelCostMicros } from '../../src/limits/model-cost.ts'
import { convertAnthropicUsage } from '../../src/providers/anthropic/convert-anthropic-usage.ts'
import { toMessagesUsage } from '../../src/surfaces/messages/convert-usage.ts'
import { chatUsage, responsesUsage } from '../../src/surfaces/responses/response-object.ts'

const model = {
  name: 'cached',
  context_window: 200_000,
  max_output_tokens: 4096,
  features: ['streaming'],
  pricing: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 },
} as unknown as ModelConfig

const ANTHROPIC = {
  input_tokens: 10,
  cache_creation_input_tokens: 5,
  cache_read_input_tokens: 100,
  output_tokens: 7,
}

describe('cache writes', () => {
  test('Anthropic: written tokens kept apart and billed at cache_write (10×3 + 5×3.75 + 100×0.3 + 7×15 = 183.75 → 184 µ$)', () => {
    const usage = convertAnthropicUsage(ANTHROPIC)
    expect(usage).toEqual({
      prompt_tokens: 115,
      completion_tokens: 7,
      total_tokens: 122,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 5 },
    })
    expect(modelCostMicros(model, usage)).toBe(184)
  })

  test('no cache writes: the usage as before (no cache_write_tokens member)', () => {
    expect(convertAnthropicUsage({ input_tokens: 10, output_tokens: 7 }).prompt_tokens_details).toEqual({
      cached_tokens: 0,
    })
  })

  test('given back on Messages and Responses as reported', () => {
    const usage = convertAnthropicUsage(ANTHROPIC)
    expect(toMessagesUsage(usage)).toEqual(ANTHROPIC)
    expect(responsesUsage(usage).input_tokens_details).toEqual({ cached_tokens: 100, cache_write_tokens: 5 })
  })

  test('Responses pass-through: the upstream’s cache_write_tokens reach the cost', () => {
    const usage = chatUsage({
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 1000 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 1000,
    })
    expect(usage!.prompt_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 1000 })
    // 1000 written tokens at $3.75 / 1M.
    expect(modelCostMicros(model, usage)).toBe(3750)
  })
})
