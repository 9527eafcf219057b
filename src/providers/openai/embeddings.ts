/**
 * @module
 * Embeddings on an OpenAI-compatible API for a surface of another wire (Gemini's `:embedContent`
 * and `:batchEmbedContents`): the canonical request as OpenAI's `POST {base_url}/embeddings`
 * (no `encoding_format`: the API answers floats by default), its `data[].embedding` back as vectors in input order, and the
 * usage it reports (estimated from the input where a compatible server sends none). OpenAI's own
 * surface, `/v1/embeddings`, passes the client's body through `forward` instead.
 *
 * @example
 * const calls = createOpenAIEmbeddings({ prefix: 'oai', kind: 'openai', api_key, models })
 * await calls.embed({ model: 'text-embedding-3-small', input: { kind: 'text', items: ['hi'] }, dimensions: 8 }, ctx)
 */
import type { ProviderConfig } from '../../config/schema.ts'
import { estimatedUsage } from '../../limits/embedding-estimate.ts'
import { type EmbeddingRequest, type EmbeddingResult, embeddingUsage } from '../../operations/embeddings.ts'
import { invalidResponse, openAIStyleError, readJson, upstreamFetch } from '../http.ts'
import type { CallContext, EmbeddingCalls } from '../types.ts'
import { apiUrl, bodyError, requestHeaders } from './api.ts'

export function createOpenAIEmbeddings(provider: ProviderConfig): EmbeddingCalls {
  const label = provider.prefix
  const url = apiUrl(provider, '/embeddings')
  const headers = requestHeaders(provider, 'application/json')
  const mapError = (status: number, text: string) => openAIStyleError(status, text, label)
  return {
    // OpenAI takes every canonical input (texts and token ids); what it refuses, it names.
    check: () => {},
    async embed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
      const body = JSON.stringify({
        model: req.model,
        input: req.input.items,
        dimensions: req.dimensions,
        user: req.user,
      })
      const res = await upstreamFetch(url, { method: 'POST', headers, body }, ctx, mapError)
      const json = (await readJson(res, ctx)) as {
        data?: unknown
        usage?: { prompt_tokens?: unknown }
      } | null
      if (json === null || typeof json !== 'object' || Array.isArray(json)) {
        throw invalidResponse(label, 'the body is not a JSON object')
      }
      const error = bodyError(json, label)
      if (error) throw error
      const vectors = vectorsOf(json.data, req.input.items.length, label)
      const reported = json.usage?.prompt_tokens
      const usage =
        typeof reported === 'number' && Number.isFinite(reported) && reported >= 0
          ? embeddingUsage(reported)
          : estimatedUsage(req.input, 'openai', req.model)
      return { vectors, usage }
    },
  }
}

/** `data`'s vectors by their `index` (OpenAI sends them in order; a compatible server may not). */
function vectorsOf(data: unknown, count: number, label: string): number[][] {
  if (!Array.isArray(data) || data.length !== count) {
    throw invalidResponse(label, `expected ${count} embeddings in a data array`)
  }
  const vectors: number[][] = new Array(count)
  data.forEach((item, i) => {
    const { index = i, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown }
    if (
      typeof index !== 'number' ||
      !Number.isInteger(index) ||
      index < 0 ||
      index >= count ||
      vectors[index] !== undefined
    ) {
      throw invalidResponse(label, `data[${i}] has no index of its own below ${count}`)
    }
    if (
      !Array.isArray(embedding) ||
      embedding.length === 0 ||
      !embedding.every((v) => typeof v === 'number')
    ) {
      throw invalidResponse(label, `data[${i}] has no embedding array of numbers (encoding_format float)`)
    }
    vectors[index] = embedding as number[]
  })
  return vectors
}
