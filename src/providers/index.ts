/** @module Adapter registry: one adapter per configured provider, chosen by its wire `kind`. */
import type { ProviderConfig } from '../config/index.ts'
import { createAnthropicAdapter } from './anthropic/index.ts'
import { createDemoAdapter } from './demo/index.ts'
import { createGeminiAdapter } from './gemini/index.ts'
import { createOpenAIAdapter } from './openai/index.ts'
import type { ProviderAdapter } from './types.ts'

const FACTORIES: Record<ProviderConfig['kind'], (p: ProviderConfig) => ProviderAdapter> = {
  openai: createOpenAIAdapter,
  anthropic: createAnthropicAdapter,
  gemini: createGeminiAdapter,
  demo: createDemoAdapter,
}

/** The adapter for one provider config (a pool key's attempts get one with that key). */
export function createAdapter(p: ProviderConfig): ProviderAdapter {
  return FACTORIES[p.kind](p)
}

export function createAdapters(providers: ProviderConfig[]): Map<string, ProviderAdapter> {
  return new Map(providers.map((p) => [p.prefix, FACTORIES[p.kind](p)]))
}

export type { ProviderAdapter } from './types.ts'
