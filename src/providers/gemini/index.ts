/**
 * @module
 * The Gemini API adapter (`kind: gemini`): `generateContent` and `streamGenerateContent`.
 *
 * @example
 * const adapter = createGeminiAdapter({ prefix: 'gemini', kind: 'gemini', api_key, models })
 * const stream = await adapter.stream(req, ctx)
 */
import type { ProviderConfig } from '../../config/schema.ts'
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../../operations/chat.ts'
import { invalidResponse, readJson, upstreamFetch } from '../http.ts'
import { planStream, type StreamPlan, upstreamPlan } from '../stream-plan.ts'
import type { CallContext, ChunkStream, ProviderAdapter } from '../types.ts'
import { geminiHeaders, geminiUrl } from './api.ts'
import { convertGeminiResponse } from './convert-gemini-response.ts'
import { convertToGeminiRequest } from './convert-to-gemini-request.ts'
import { createGeminiEmbeddings } from './embeddings.ts'
import { geminiStreamTransformer } from './gemini-stream-transform.ts'
import type { GeminiErrorBody, GeminiResponse } from './gemini-types.ts'
import { mapGeminiError, mapGeminiHttpError } from './map-gemini-error.ts'

export function createGeminiAdapter(provider: ProviderConfig): ProviderAdapter {
  /** Converts first, so a request Gemini cannot take fails with a 400 before any network call. */
  const send = (req: ChatRequest, ctx: CallContext, stream: boolean): Promise<Response> => {
    const body = convertToGeminiRequest(req)
    return upstreamFetch(
      geminiUrl(provider, req.model, stream),
      { method: 'POST', headers: geminiHeaders(provider), body: JSON.stringify(body) },
      ctx,
      (status, text) => mapGeminiHttpError(status, text, provider),
    )
  }

  const adapter: ProviderAdapter = {
    async complete(req: ChatRequest, ctx: CallContext): Promise<ChatCompletion> {
      const body = await readJson(await send(req, ctx, false), ctx)
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw invalidResponse(provider.prefix, 'the body is not a Gemini response object')
      }
      if ('error' in body) throw mapGeminiError(body as GeminiErrorBody, provider)
      return convertGeminiResponse(body as GeminiResponse, req.model)
    },

    async stream(req: ChatRequest, ctx: CallContext): Promise<ChunkStream> {
      return planStream(await adapter.streamPlan!(req, ctx))
    },

    async streamPlan(req: ChatRequest, ctx: CallContext): Promise<StreamPlan<ChatCompletionChunk>> {
      const res = await send(req, ctx, true)
      if (!res.body) throw invalidResponse(provider.prefix, 'the stream has no body')
      return upstreamPlan(
        res.body,
        ctx,
        geminiStreamTransformer({ model: req.model, provider, onMalformed: ctx.onMalformed }),
      )
    },

    embeddings: createGeminiEmbeddings(provider),
  }
  return adapter
}
