/**
 * @module
 * The Anthropic Messages API adapter (`kind: anthropic`).
 *
 * @example
 * const adapter = createAnthropicAdapter({ prefix: 'anthropic', kind: 'anthropic', api_key, models })
 * const completion = await adapter.complete(req, ctx)
 */
import type { ProviderConfig } from '../../config/schema.ts'
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../../operations/chat.ts'
import { invalidResponse, isJsonAnswer, postJson, readJson, upstreamFetch } from '../http.ts'
import { requestBody } from '../request-body.ts'
import { answerPlan, type StreamPlan, upstreamPlan } from '../stream-plan.ts'
import type { CallContext, ForwardCall, ProviderAdapter } from '../types.ts'
import { anthropicStreamTransformer } from './anthropic-stream-transform.ts'
import type { AnthropicResponse } from './anthropic-types.ts'
import { anthropicHeaders, anthropicMessagesUrl, anthropicUrl } from './api.ts'
import { convertAnthropicResponse } from './convert-anthropic-response.ts'
import { convertToAnthropicRequest } from './convert-to-anthropic-request.ts'
import { mapAnthropicHttpError } from './map-anthropic-error.ts'
import { messageEvents } from './message-events.ts'

export function createAnthropicAdapter(provider: ProviderConfig): ProviderAdapter {
  const url = anthropicMessagesUrl(provider)
  const mapError = (status: number, text: string) => mapAnthropicHttpError(status, text, provider)

  /** Converts first, so a request Anthropic cannot take fails with a 400 before any network call. */
  const send = (req: ChatRequest, ctx: CallContext, stream: boolean): Promise<Response> => {
    const body = convertToAnthropicRequest(req, { stream, defaultMaxTokens: ctx.model.max_output_tokens })
    return postJson(url, anthropicHeaders(provider), body, ctx, mapError)
  }

  const adapter: ProviderAdapter = {
    async complete(req: ChatRequest, ctx: CallContext): Promise<ChatCompletion> {
      const body = await readJson(await send(req, ctx, false), ctx)
      if (!isMessage(body)) throw invalidResponse(provider.prefix, 'the body is not an Anthropic message')
      return convertAnthropicResponse(body, req.model)
    },

    /** Pass-through: the client's `anthropic-version` wins over the configured one; the key is ours. */
    forward(call: ForwardCall, ctx: CallContext): Promise<Response> {
      const headers = anthropicHeaders(provider)
      for (const [name, value] of Object.entries(call.headers)) headers.set(name, value)
      return upstreamFetch(
        anthropicUrl(provider, call.path),
        { method: 'POST', headers, body: requestBody(call.body, headers) },
        ctx,
        mapError,
      )
    },

    async stream(req: ChatRequest, ctx: CallContext): Promise<StreamPlan<ChatCompletionChunk>> {
      const decoder = anthropicStreamTransformer({ model: req.model, provider, onMalformed: ctx.onMalformed })
      const res = await send(req, ctx, true)
      // A 200 with a JSON body instead of events: an error in disguise (thrown as the failure it
      // names), or `stream` ignored — the message, read as the events it stands for.
      if (isJsonAnswer(res))
        return upstreamPlan(messageEvents(await readJson(res, ctx), provider, ctx.cutWithin), ctx, decoder)
      return answerPlan(res, ctx, decoder)
    },
  }
  return adapter
}

function isMessage(body: unknown): body is AnthropicResponse {
  const b = body as Partial<AnthropicResponse> | null
  return typeof b === 'object' && b !== null && typeof b.id === 'string' && Array.isArray(b.content)
}
