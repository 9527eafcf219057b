/**
 * @module
 * The operations the gateway serves, as a key: a surface serves one, an adapter declares the
 * ones its wire carries, and a model's `type` says which it answers. Chat models answer `chat`
 * and `count_tokens`; embedding models answer `embeddings`.
 *
 * @example
 * operationsOf('embedding') // ['embeddings']
 */
import { GatewayError } from '../util/errors.ts'

/** What a model answers: chat (chat, messages, responses surfaces) or embeddings (`/v1/embeddings`). */
export const MODEL_TYPES = ['chat', 'embedding'] as const
export type ModelType = (typeof MODEL_TYPES)[number]

/** A model entry's type; `chat` when it does not say. */
export function modelType(model: { type?: ModelType }): ModelType {
  return model.type ?? 'chat'
}

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

/**
 * Refuses a model that does not answer the surface's operation: a chat model on `/v1/embeddings`,
 * an embedding model on a chat surface → 400 naming `model`.
 */
export function checkModelServes(model: { type?: ModelType }, operation: Operation, modelId: string): void {
  const type = modelType(model)
  if (operationsOf(type).includes(operation)) return
  const instead =
    type === 'embedding'
      ? 'POST /v1/embeddings'
      : 'a chat surface (/v1/chat/completions, /v1/messages, /v1/responses)'
  throw new GatewayError(
    400,
    'model_not_supported',
    `'${modelId}' is ${type === 'embedding' ? 'an embedding' : 'a chat'} model: send it to ${instead}. GET /v1/models shows each model's type.`,
    { param: 'model' },
  )
}
