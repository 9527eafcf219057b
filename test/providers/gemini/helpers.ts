/** Shared pieces of the Gemini adapter tests: provider config and call context. */
import type { ProviderConfig } from '../../../src/config/schema.ts'

export { assemble, callContext, drain, planItems, readEvents } from '../anthropic/helpers.ts'

export const API_KEY = 'AIzaSyTEST-key-0123456789abcdefghijkl'

export function geminiProvider(baseUrl: string, extra: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    prefix: 'gemini',
    kind: 'gemini',
    base_url: baseUrl,
    api_key: API_KEY,
    models: [
      {
        name: 'gemini-test',
        context_window: 1_000_000,
        max_output_tokens: 8192,
        features: ['streaming', 'tools'],
      },
    ],
    ...extra,
  }
}
