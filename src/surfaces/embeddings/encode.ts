/**
 * @module
 * The `POST /v1/embeddings` answer in OpenAI's list shape, built from a canonical result:
 * `{"object":"list","data":[{"object":"embedding","index":0,"embedding":...}],"model","usage"}`
 * with usage `{prompt_tokens, total_tokens}`. `encoding_format: base64` sends each vector as the
 * base64 of its little-endian float32 bytes, which is what the `openai` SDK decodes (it asks for
 * base64 by default); `float` (the API's default) sends numbers.
 *
 * @example
 * encodeEmbeddings({ vectors: [[0.6, 0.8]], usage: { prompt_tokens: 2, total_tokens: 2 } }, 'demo/embed', 'float')
 * // '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.6,0.8]}],"model":"demo/embed","usage":{"prompt_tokens":2,"total_tokens":2}}'
 */
import type { EmbeddingResult } from '../../operations/embeddings.ts'
import type { EncodingFormat } from './request-schema.ts'

/** The response body text. `modelId` is the client's (`prefix/name`). */
export function encodeEmbeddings(result: EmbeddingResult, modelId: string, format: EncodingFormat): string {
  // Built as text: a batch holds up to 2048 vectors of thousands of numbers, and one object tree
  // per item only to serialise it again would double the work.
  const items: string[] = new Array(result.vectors.length)
  for (let i = 0; i < result.vectors.length; i++) {
    const vector = result.vectors[i]!
    // `join` writes finite numbers as JSON does, twice as fast; vectors are finite (JSON numbers
    // from an upstream, or the demo's unit vectors).
    const embedding = format === 'base64' ? `"${float32Base64(vector)}"` : `[${vector.join(',')}]`
    items[i] = `{"object":"embedding","index":${i},"embedding":${embedding}}`
  }
  const { prompt_tokens, total_tokens } = result.usage
  return (
    `{"object":"list","data":[${items.join(',')}],"model":${JSON.stringify(modelId)},` +
    `"usage":{"prompt_tokens":${prompt_tokens},"total_tokens":${total_tokens}}}`
  )
}

/** Base64 of the vector as float32, little-endian whatever the machine's byte order. */
export function float32Base64(vector: readonly number[]): string {
  const bytes = new Uint8Array(vector.length * 4)
  const view = new DataView(bytes.buffer)
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i]!, true)
  return Buffer.from(bytes.buffer).toString('base64')
}
