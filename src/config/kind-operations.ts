/**
 * @module
 * Which operations each provider kind's wire carries, declared once beside `KIND_LIMITS`: the
 * config loader refuses a model whose type needs an operation its provider's kind lacks, so no
 * request ever reaches an adapter that cannot answer it.
 *
 * @example
 * KIND_OPERATIONS.anthropic.embeddings // 'Anthropic has no embeddings API ...'
 */

import type { Operation } from '../operations/operation.ts'
import type { ProviderKind } from './schema-providers.ts'

/** Per kind: the operations it cannot serve, each with the reason the config error gives. */
export const KIND_OPERATIONS: Record<ProviderKind, Partial<Record<Operation, string>>> = {
  openai: {},
  anthropic: {
    embeddings:
      'Anthropic has no embeddings API (it recommends Voyage AI); put embedding models under an openai, gemini or demo provider',
  },
  gemini: {},
  demo: {},
}
