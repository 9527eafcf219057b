/**
 * @module
 * What an embeddings request may ask of its model, checked before admission whatever the route
 * (pass-through too), so a refused request is not counted: `dimensions` no longer than the vectors
 * the model makes (when its entry says), and each token-id array within its context window. Text
 * is left to the upstream: only its tokenizer can count it exactly.
 *
 * @example
 * checkEmbeddingLimits(view, { ...model, dimensions: 256 }) // throws 400 param 'dimensions' for dimensions: 512
 */
import type { ModelConfig } from '../../config/schema.ts'
import { GatewayError } from '../../util/errors.ts'
import type { EmbeddingsView } from './validate.ts'

export function checkEmbeddingLimits(view: EmbeddingsView, model: ModelConfig): void {
  const asked = view.body.dimensions
  if (asked !== undefined && model.dimensions !== undefined && asked > model.dimensions) {
    throw new GatewayError(
      400,
      'invalid_value',
      `dimensions is ${asked}, but this model's vectors have ${model.dimensions}. Send at most ${model.dimensions}, or leave dimensions out to get them all.`,
      { param: 'dimensions' },
    )
  }
  if (view.input.kind !== 'tokens') return
  const items = view.input.items
  for (let i = 0; i < items.length; i++) {
    if (items[i]!.length <= model.context_window) continue
    const param = typeof view.body.input[0] === 'number' ? 'input' : `input[${i}]`
    throw new GatewayError(
      400,
      'context_length_exceeded',
      `${param} has ${items[i]!.length} tokens; this model embeds at most ${model.context_window} per input. Shorten or split it.`,
      { param },
    )
  }
}
