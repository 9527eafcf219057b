/**
 * @module
 * The usage of an embeddings answer whose provider reports none (Gemini's batch answer, a
 * compatible server without usage), marked as an estimate: token ids count exactly, text by the
 * bound admission reserves for the provider's tokenizer (text-bound.ts: never under what it bills
 * on the corpus). Four characters a token, the estimate before, settled a token limit at an eighth
 * of what Gemini bills for CJK text (decisions.md, ledger64).
 *
 * @example
 * estimatedUsage({ kind: 'text', items: ['Hello, world'] }, 'gemini') // { prompt_tokens: …, total_tokens: …, estimated: 'the tokenizer bound' }
 */
import type { ProviderKind } from '../config/schema-providers.ts'
import { type EmbeddingInput, type EmbeddingUsage, embeddingUsage } from '../operations/embeddings.ts'
import { textTokenBound } from './text-bound.ts'

/** How the estimate was made, as `x-switchyard-token-count` tells it. */
const BOUND = 'the tokenizer bound'

export function estimatedUsage(input: EmbeddingInput, kind: ProviderKind, model?: string): EmbeddingUsage {
  if (input.kind === 'tokens') {
    let tokens = 0
    for (const ids of input.items) tokens += ids.length
    return embeddingUsage(tokens)
  }
  let tokens = 0
  for (const text of input.items) tokens += Math.max(1, textTokenBound(text, kind, model))
  return { ...embeddingUsage(tokens), estimated: BOUND }
}
