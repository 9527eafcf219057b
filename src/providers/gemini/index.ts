/**
 * @module
 * The Gemini API adapter (`kind: gemini`): `generateContent` and `streamGenerateContent`, and the
 * Gemini surface's pass-through (`forward`).
 *
 * @example
 * const adapter = createGeminiAdapter({ prefix: 'gemini', kind: 'gemini', api_key, models })
 * const plan = await adapter.stream(req, ctx) // the body and its transformers, for the stream writer
 */
import type { ProviderConfig } from '../../config/schema.ts'
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../../operations/chat.ts'
import { invalidResponse, isJsonAnswer, postJson, readJson, upstreamFetch } from '../http.ts'
import { requestBody } from '../request-body.ts'
import { answerPlan, type StreamPlan, upstreamPlan } from '../stream-plan.ts'
import type { CallContext, ForwardCall, ProviderAdapter } from '../types.ts'
import { geminiApiRoot, geminiHeaders, geminiUrl } from './api.ts'
import { convertGeminiResponse } from './convert-gemini-response.ts'
import { convertToGeminiRequest } from './convert-to-gemini-request.ts'
import { createGeminiEmbeddings } from './embeddings.ts'
import { geminiStreamTransformer } from './gemini-stream-transform.ts'
import type { GeminiErrorBody, GeminiResponse } from './gemini-types.ts'
import { mapGeminiError, mapGeminiHttpError } from './map-gemini-error.ts'
import { geminiEvents } from './response-events.ts'

export function createGeminiAdapter(provider: ProviderConfig): ProviderAdapter {
  const mapError = (status: number, text: string) => mapGeminiHttpError(status, text, provider)
  /** Converts first, so a request Gemini cannot take fails with a 400 before any network call. */
  const send = (req: ChatRequest, ctx: CallContext, stream: boolean): Promise<Response> => {
    const body = convertToGeminiRequest(req)
    return postJson(geminiUrl(provider, req.model, stream), geminiHeaders(provider), body, ctx, mapError)
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

    async stream(req: ChatRequest, ctx: CallContext): Promise<StreamPlan<ChatCompletionChunk>> {
      const decoder = geminiStreamTransformer({ model: req.model, provider, onMalformed: ctx.onMalformed })
      const res = await send(req, ctx, true)
      // A 200 with a JSON body instead of events: an error in disguise (thrown as the failure it
      // names), or `alt=sse` ignored — the response, read as the events it stands for.
      if (isJsonAnswer(res))
        return upstreamPlan(geminiEvents(await readJson(res, ctx), provider, ctx.cutWithin), ctx, decoder)
      return answerPlan(res, ctx, decoder)
    },

    /** Pass-through (the Gemini surface): `call.path` under the API root (`/models/{model}:{method}`); the key is ours. */
    forward(call: ForwardCall, ctx: CallContext): Promise<Response> {
      const headers = geminiHeaders(provider)
      for (const [name, value] of Object.entries(call.headers)) headers.set(name, value)
      const url = `${geminiApiRoot(provider)}${call.path}`
      return upstreamFetch(
        url,
        { method: 'POST', headers, body: requestBody(call.body, headers) },
        ctx,
        mapError,
      )
    },

    embeddings: createGeminiEmbeddings(provider),
  }
  return adapter
}
