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
  /** The gateway's estimate of text (`estimateInputTokens`), not a count the provider reported. */
  estimated?: true
}

export interface EmbeddingResult {
  /** One vector per input item, in input order. */
  vectors: number[][]
  usage: EmbeddingUsage
}

/**
 * Input tokens where the provider reports none (Gemini's batch answer, the demo): token arrays
 * count exactly; text by OpenAI's rule of thumb of about four characters per token, at least one
 * per item. An estimate, recorded as usage like any other.
 */
export function estimateInputTokens(input: EmbeddingInput): number {
  let tokens = 0
  for (const item of input.items) tokens += estimateItemTokens(item)
  return tokens
}

/** One input item's tokens by the same rule. */
export function estimateItemTokens(item: string | readonly number[]): number {
  return typeof item === 'string' ? Math.max(1, Math.ceil(item.length / 4)) : item.length
}

export function embeddingUsage(promptTokens: number): EmbeddingUsage {
  return { prompt_tokens: promptTokens, total_tokens: promptTokens }
}

/** The usage of a provider that reports none: the estimate, marked as one (token ids count exactly). */
export function estimatedUsage(input: EmbeddingInput): EmbeddingUsage {
  const usage = embeddingUsage(estimateInputTokens(input))
  return input.kind === 'text' ? { ...usage, estimated: true } : usage
}
