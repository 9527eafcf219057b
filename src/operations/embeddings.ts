/**
 * @module
 * The embeddings operation's canonical request and result: what a surface hands a provider's
 * embedding call, and what it gets back. Like the chat operation's canonical form, it is OpenAI's
 * (`POST /embeddings`), with `input` normalised to a list so a provider never tells a string from
 * an array of one. Vectors are plain numbers; the surface encodes them (`float` or `base64`).
 *
 * @example
 * const req: EmbeddingRequest = { model: 'text-embedding-3-small', input: { kind: 'text', items: ['a', 'b'] }, dimensions: 256 }
 * const result: EmbeddingResult = await calls.embed(req, ctx)
 * result.vectors.length // 2, in input order
 */

/** What to embed: texts, or texts already tokenized (OpenAI's token-id arrays). Never empty. */
export type EmbeddingInput = { kind: 'text'; items: string[] } | { kind: 'tokens'; items: number[][] }

export interface EmbeddingRequest {
  /** The provider's name for the model (no prefix). */
  model: string
  input: EmbeddingInput
  /** Vector length asked for; absent = the model's own. */
  dimensions?: number
  /** The end user, for providers that take it (OpenAI's `user`). */
  user?: string
}

/** OpenAI's embeddings usage: only input tokens exist. */
export interface EmbeddingUsage {
  prompt_tokens: number
  total_tokens: number
  /**
   * The gateway's estimate of text, not a count the provider reported: how it was estimated
   * (`x-switchyard-token-count` says `estimate; <this>`).
   */
  estimated?: string
}

export interface EmbeddingResult {
  /** One vector per input item, in input order. */
  vectors: number[][]
  usage: EmbeddingUsage
}

export function embeddingUsage(promptTokens: number): EmbeddingUsage {
  return { prompt_tokens: promptTokens, total_tokens: promptTokens }
}
