/**
 * @module
 * What a provider kind's wire cannot carry, declared once. The config loader refuses a model
 * that lists such a feature, so the gateway's one feature check (against the model's features)
 * already refuses every request that would need it, and no adapter checks it again.
 *
 * @example
 * KIND_LIMITS.anthropic.n // 'Anthropic returns one choice per request'
 * KIND_TEMPERATURE.anthropic // { min: 0, max: 1 }
 */
import type { Feature, ProviderKind } from './schema-providers.ts'

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

/**
 * A kind's temperature range where its API's is not OpenAI's 0–2: the range of its models that
 * configure none, and the widest one may configure (Anthropic: 0–1, "Ranges from 0.0 to 1.0").
 * A request outside it is then the feature check's 400 naming `temperature`, not the upstream's.
 */
export const KIND_TEMPERATURE: Partial<Record<ProviderKind, { min: number; max: number }>> = {
  anthropic: { min: 0, max: 1 },
}
