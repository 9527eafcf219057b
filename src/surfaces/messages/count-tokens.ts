/**
 * @module
 * `POST /v1/messages/count_tokens`, the count_tokens operation's surface on the pipeline. Needs a
 * valid key and a chat model the plan includes, but is not admitted against the account's limits
 * (it declares so); its own throttle (per key, per second) keeps it cheap.
 * Anthropic providers answer it upstream (body passed through, model swapped). For every other
 * kind the gateway counts the request's chat form (`../count-tokens.ts`: o200k_base, an estimate
 * for other models' tokenizers, said so in the `x-switchyard-token-count` response header).
 */
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { apiKeyOrBearer } from '../../auth/authenticate.ts'
import type { CountTokensSurface } from '../../pipeline/surface.ts'
import { readText } from '../../providers/http.ts'
import { parseChatBody, validateWith } from '../chat/validate.ts'
import { CountTokensThrottle, ESTIMATE_HEADER, ESTIMATE_VALUE, estimateChatTokens } from '../count-tokens.ts'
import { convertConversation } from './convert-to-chat-request.ts'
import { messagesErrorResponse } from './errors.ts'
import { forwardBody, forwardHeaders } from './pass-through.ts'
import { type CountTokensRequest, CountTokensRequestSchema, checkTools } from './request-schema.ts'

const checker = TypeCompiler.Compile(CountTokensRequestSchema)

const EXAMPLE = '{"model": "<prefix>/<model>", "messages": [{"role": "user", "content": "Hello"}]}'

/** The count_tokens surface, with its own throttle of `perSecond` calls per key. */
export function countTokensSurface(perSecond: number): CountTokensSurface<CountTokensRequest> {
  const throttle = new CountTokensThrottle(perSecond)
  return {
    name: 'messages',
    inputParam: 'messages',
    operation: 'count_tokens',
    admitted: false,
    credential: apiKeyOrBearer,
    decode(text, limitsChecked) {
      const view = validateWith(checker, parseChatBody(text, EXAMPLE, limitsChecked))
      checkTools(view)
      return { model: view.model, view, stream: false }
    },
    throttle: (keyId) => throttle.take(keyId, performance.timeOrigin + performance.now()),
    async count(view, entry, adapter, ctx, request, headers) {
      if (entry.provider.kind === 'anthropic') {
        const upstream = await adapter.forward!(
          {
            path: '/v1/messages/count_tokens',
            body: forwardBody(view, entry),
            headers: forwardHeaders(request.headers),
          },
          ctx,
        )
        // Read under the provider's timeouts and max_response_bytes, like every upstream body.
        return new Response(await readText(upstream, ctx), {
          headers: { ...headers, 'content-type': 'application/json', [ESTIMATE_HEADER]: 'upstream' },
        })
      }
      const inputTokens = await estimateTokens(view)
      return new Response(JSON.stringify({ input_tokens: inputTokens }), {
        headers: {
          ...headers,
          'content-type': 'application/json',
          [ESTIMATE_HEADER]: ESTIMATE_VALUE,
        },
      })
    },
    errorResponse: messagesErrorResponse,
  }
}

/** The gateway's own count of a Messages request (its chat form): see `estimateChatTokens`. */
export async function estimateTokens(view: CountTokensRequest): Promise<number> {
  const conversation = convertConversation(view)
  return estimateChatTokens(conversation.messages, conversation.tools)
}
