/** @module One model of the catalogue: its id, its provider and its config (routing.ts builds them). */
import type { ModelConfig, ProviderConfig } from '../config/schema.ts'

export interface CatalogueEntry {
  /** The prefixed id clients use, e.g. `openai/gpt-4o-mini`. */
  id: string
  provider: ProviderConfig
  model: ModelConfig
}
