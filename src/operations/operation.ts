/**
 * @module
 * The operations the gateway serves, as a key: a surface serves one, an adapter declares the
 * ones its wire carries, and a model's `type` says which it answers. Chat models answer `chat`
 * and `count_tokens`; embedding models answer `embeddings`.
 *
 * @example
 * operationsOf('embedding') // ['embeddings']
 */
import type { ModelType } from '../config/schema.ts'

export const OPERATIONS = ['chat', 'embeddings', 'count_tokens'] as const
export type Operation = (typeof OPERATIONS)[number]

const BY_MODEL_TYPE: Record<ModelType, readonly Operation[]> = {
  chat: ['chat', 'count_tokens'],
  embedding: ['embeddings'],
}

/** The operations a model of this type answers. */
export function operationsOf(type: ModelType): readonly Operation[] {
  return BY_MODEL_TYPE[type]
}
