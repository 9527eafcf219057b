/**
 * @module
 * Embeddings on the Gemini API: `POST {root}/models/{model}:batchEmbedContents` with
 * `{"requests": [{"model": "models/{model}", "content": {"parts": [{"text"}]}, "outputDimensionality"}]}`
 * → `{"embeddings": [{"values": [...]}]}`, in request order. Gemini takes at most 100 requests per
 * batch, so longer inputs go in several calls, one after another (a retry sends only the parts not
 * yet answered: `EmbeddingCalls.embed`'s `answered`). Gemini embeds text only: token-id
 * arrays are refused (400 naming `input`) before admission. Shortened vectors (`dimensions`) come
 * back from Gemini unnormalised; they are scaled to unit length, as OpenAI's are. It reports no token counts for a
 * batch, so usage is estimated from the input. Fields Gemini does not know (OpenAI's `user`) are
 * not sent, as it refuses unknown fields, and are named to the client (`leavesOut`).
 *
 * @example
 * const gemini = createGeminiEmbeddings({ prefix: 'gemini', kind: 'gemini', api_key, models })
 * await gemini.embed({ model: 'gemini-embedding-001', input: { kind: 'text', items: ['hi'] }, dimensions: 768 }, ctx)
 */
import type { ProviderConfig } from '../../config/schema.ts'
import { estimatedUsage } from '../../limits/embedding-estimate.ts'
import type { EmbeddingRequest, EmbeddingResult } from '../../operations/embeddings.ts'
import { GatewayError } from '../../util/errors.ts'
import { invalidResponse, readJson, upstreamFetch } from '../http.ts'
import type { CallContext, EmbeddingCalls } from '../types.ts'
import { geminiApiRoot, geminiHeaders } from './api.ts'
import type { GeminiErrorBody } from './gemini-types.ts'
import { mapGeminiError, mapGeminiHttpError } from './map-gemini-error.ts'

/** Gemini's limit: "at most 100 requests can be in one batch". */
export const GEMINI_BATCH_MAX = 100

export function createGeminiEmbeddings(provider: ProviderConfig): EmbeddingCalls {
  const headers = geminiHeaders(provider)
  const label = provider.prefix

  const call = async (url: string, body: string, ctx: CallContext, count: number): Promise<number[][]> => {
    const mapError = (status: number, text: string) => mapGeminiHttpError(status, text, provider)
    const res = await upstreamFetch(url, { method: 'POST', headers, body }, ctx, mapError)
    const json = await readJson(res, ctx)
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      throw invalidResponse(label, 'the body is not a Gemini response object')
    }
    if ('error' in json) throw mapGeminiError(json as GeminiErrorBody, provider)
    return vectorsOf(json as { embeddings?: unknown }, count, label)
  }

  const check = (req: EmbeddingRequest): void => {
    if (req.input.kind === 'tokens') {
      throw new GatewayError(
        400,
        'unsupported_value',
        `Provider '${label}' (Gemini) embeds text only, not token ids: send input as a string or an array of strings.`,
        { param: 'input' },
      )
    }
  }

  return {
    check,
    leavesOut: ['user'],
    async embed(
      req: EmbeddingRequest,
      ctx: CallContext,
      answered: number[][][] = [],
    ): Promise<EmbeddingResult> {
      check(req)
      const name = req.model.replace(/^models\//, '')
      const url = `${geminiApiRoot(provider)}/models/${encodeURIComponent(name)}:batchEmbedContents`
      const texts = req.input.items as string[]
      for (let start = answered.length * GEMINI_BATCH_MAX; start < texts.length; start += GEMINI_BATCH_MAX) {
        const batch = texts.slice(start, start + GEMINI_BATCH_MAX)
        const requests = batch.map((text) => ({
          model: `models/${name}`,
          content: { parts: [{ text }] },
          ...(req.dimensions === undefined ? {} : { outputDimensionality: req.dimensions }),
        }))
        answered.push(await call(url, JSON.stringify({ requests }), ctx, batch.length))
      }
      // Gemini normalises only its full-length vectors; OpenAI's `dimensions` promises unit vectors.
      const vectors = answered.flat()
      if (req.dimensions !== undefined) for (const vector of vectors) normalise(vector)
      return { vectors, usage: estimatedUsage(req.input, 'gemini', name) }
    },
  }
}

function vectorsOf(json: { embeddings?: unknown }, count: number, label: string): number[][] {
  const embeddings = json.embeddings
  if (!Array.isArray(embeddings) || embeddings.length !== count) {
    throw invalidResponse(label, `expected ${count} embeddings, one per request`)
  }
  return embeddings.map((embedding, i) => {
    const values = (embedding as { values?: unknown } | null)?.values
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'number')) {
      throw invalidResponse(label, `embeddings[${i}] has no values array of numbers`)
    }
    return values as number[]
  })
}

/** Scales the vector to length 1 in place (a zero vector stays as it is). */
function normalise(vector: number[]): void {
  let sum = 0
  for (const v of vector) sum += v * v
  const norm = Math.sqrt(sum)
  if (norm === 0) return
  for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm
}
