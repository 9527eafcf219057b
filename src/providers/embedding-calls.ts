/**
 * @module
 * The embeddings operation of the provider kinds that translate it: Gemini (`batchEmbedContents`)
 * and the demo (deterministic vectors, offline). OpenAI-compatible providers need no translation:
 * the surface passes the client's body through their `forward` call (`POST {base_url}/embeddings`).
 * Anthropic has no embeddings API (`kind-operations.ts`; the config loader refuses such a model).
 *
 * @example
 * const calls = createEmbeddingCalls(provider) // undefined for openai (pass-through) and anthropic
 * calls?.check(req, model)                      // before admission: 400s naming the field
 * const { vectors, usage } = await calls!.embed(req, ctx)
 */
import type { ModelConfig, ProviderConfig } from '../config/schema.ts'
import type { EmbeddingRequest, EmbeddingResult } from '../operations/embeddings.ts'
import { createDemoEmbeddings } from './demo/embeddings.ts'
import { createGeminiEmbeddings } from './gemini/embeddings.ts'
import type { CallContext } from './types.ts'

export interface EmbeddingCalls {
  /** Refuses what this provider cannot embed, with a 400 naming the field. Runs before admission. */
  check(req: EmbeddingRequest, model: ModelConfig): void
  /** One vector per input item, in order, and the usage to record. Throws `GatewayError`s. */
  embed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult>
}

const FACTORIES: Partial<Record<ProviderConfig['kind'], (provider: ProviderConfig) => EmbeddingCalls>> = {
  gemini: createGeminiEmbeddings,
  demo: createDemoEmbeddings,
}

/** The provider's translated embeddings calls; undefined where requests pass through or none exist. */
export function createEmbeddingCalls(provider: ProviderConfig): EmbeddingCalls | undefined {
  return FACTORIES[provider.kind]?.(provider)
}
