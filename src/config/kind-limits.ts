/**
 * @module
 * What a provider kind's wire cannot carry, declared once. The config loader refuses a model
 * that lists such a feature, so the gateway's one feature check (against the model's features)
 * already refuses every request that would need it, and no adapter checks it again.
 *
 * @example
 * KIND_LIMITS.anthropic.n // 'Anthropic returns one choice per request'
 */
import type { Feature, ProviderKind } from './schema.ts'

export const KIND_LIMITS: Record<ProviderKind, Partial<Record<Feature, string>>> = {
  openai: {},
  anthropic: {
    n: 'Anthropic returns one choice per request',
    logprobs: 'Anthropic does not return logprobs',
  },
  gemini: {
    logprobs: 'Gemini does not return logprobs through this API',
  },
  demo: {},
}
