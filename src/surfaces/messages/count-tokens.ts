/**
 * @module
 * `POST /v1/messages/count_tokens`, the count_tokens operation's surface on the pipeline. Needs a
 * valid key and a chat model the plan includes, but is not admitted against the account's limits
 * (it declares so); its own throttle (per key, per second) keeps it cheap.
 * Anthropic providers answer it upstream (body passed through, model swapped). For every other
 * kind the gateway counts the request's chat form (`../count-tokens.ts`: o200k_base, an estimate
 * for other models' tokenizers, said so in the `x-switchyard-token-count` response header).
 */
import { apiKeyOrBearer } from '../../auth/authenticate.ts'
import type { CatalogueEntry } from '../../catalogue/entry.ts'
import { parseJsonObject } from '../../json/parse-json-body.ts'
import { compiledOnUse, validateWith } from '../../json/validation-error.ts'
import type { CountTokensSurface } from '../../pipeline/surface.ts'
import { countTokensSurface as countingSurface, estimateChatTokens } from '../count-tokens.ts'
import { convertConversation } from './convert-to-chat-request.ts'
import { messagesErrorResponse } from './errors.ts'
import { forwardBody, forwardHeaders } from './pass-through.ts'
import { type CountTokensRequest, CountTokensRequestSchema, checkTools } from './request-schema.ts'

const checker = compiledOnUse(CountTokensRequestSchema)

const EXAMPLE = '{"model": "<prefix>/<model>", "messages": [{"role": "user", "content": "Hello"}]}'

/** The count_tokens surface, with its own throttle of `perSecond` calls per key. */
export function countTokensSurface(perSecond: number): CountTokensSurface<CountTokensRequest> {
  return countingSurface<CountTokensRequest>(
    {
      name: 'messages',
      inputParam: 'messages',
      endpoint: 'count_tokens',
      credential: apiKeyOrBearer,
      decode(text, limitsChecked, _url, named) {
        const body = parseJsonObject(text, EXAMPLE, limitsChecked)
        named?.(body.model)
        const view = validateWith(checker(), body)
        checkTools(view)
        return { model: view.model, view, stream: false }
      },
      upstream: (view, entry, request) =>
        entry.provider.kind === 'anthropic'
          ? {
              path: '/v1/messages/count_tokens',
              body: forwardBody(view, entry),
              headers: forwardHeaders(request.headers),
            }
          : null,
      estimate: estimateTokens,
      answer: (inputTokens) => ({ input_tokens: inputTokens }),
      errorResponse: messagesErrorResponse,
    },
    perSecond,
  )
}

/**
 * The gateway's own count of a Messages request (its chat form, as `entry`'s upstream would get
 * it: server tools its `unsupported_tools: drop` leaves out are not counted): see `estimateChatTokens`.
 */
export async function estimateTokens(view: CountTokensRequest, entry?: CatalogueEntry): Promise<number> {
  const conversation = convertConversation(view, entry?.model.unsupported_tools)
  return estimateChatTokens(conversation.messages, conversation.tools)
}
