/**
 * @module
 * `POST /v1/responses/input_tokens` (the OpenAI SDK's `responses.inputTokens.count`), the
 * count_tokens operation on the Responses surface. Like `/v1/messages/count_tokens`: a valid key
 * and a chat model the plan includes, never admitted against the limits, its own per-key throttle.
 * The body is a Responses request, validated as `POST /v1/responses` validates one (`input` may be
 * left out, as OpenAI's `InputTokenCountParams` allows). An OpenAI provider with
 * `wire: responses` answers upstream (its `/responses/input_tokens`, body passed through with the
 * upstream's model name); every other provider gets the gateway's own count of the chat request
 * `responses.create` would send it (`../count-tokens.ts`, said so in `x-switchyard-token-count`).
 * The answer is OpenAI's `{"object": "response.input_tokens", "input_tokens": N}`.
 */
import { upstreamModelName } from '../../config/models.ts'
import { parseJsonObject } from '../../json/parse-json-body.ts'
import { forwardFor } from '../../pipeline/operations/chat-routes.ts'
import type { CountTokensSurface } from '../../pipeline/surface.ts'
import { countTokensSurface, estimateChatTokens } from '../count-tokens.ts'
import { responsesSurface } from './index.ts'
import { RESPONSES_EXAMPLE, validateResponsesRequest } from './validate.ts'
import { type ResponsesView, translateView, viewOf } from './view.ts'

/** The view, and whether the client sent `input` (a pass-through leaves it out as it came). */
interface InputTokensView extends ResponsesView {
  inputSent: boolean
}

/** The input_tokens surface, with its own throttle of `perSecond` calls per key. */
export function inputTokensSurface(perSecond: number): CountTokensSurface<InputTokensView> {
  return countTokensSurface<InputTokensView>(
    {
      name: 'responses',
      inputParam: 'input',
      endpoint: 'responses/input_tokens',
      credential: responsesSurface.credential,
      decode(text, limitsChecked, _url, named) {
        const body = parseJsonObject(text, RESPONSES_EXAMPLE, limitsChecked)
        named?.(body.model)
        const inputSent = body.input !== undefined && body.input !== null
        if (!inputSent) body.input = []
        const view = { ...viewOf(validateResponsesRequest(body)), inputSent }
        return { model: view.input.model, view, stream: false }
      },
      upstream(view, entry) {
        if (!forwardFor(responsesSurface, entry)) return null
        const { input, ...rest } = view.input
        const body = { ...rest, ...(view.inputSent ? { input } : {}), model: upstreamModelName(entry.model) }
        return { path: '/responses/input_tokens', body: JSON.stringify(body), headers: {} }
      },
      estimate(view, entry) {
        // What responses.create would send this model: its refusals (hosted tools, file ids) too.
        const { request } = translateView(view, entry)
        return estimateChatTokens(request.messages, request.tools)
      },
      answer: (inputTokens) => ({ object: 'response.input_tokens', input_tokens: inputTokens }),
      errorResponse: responsesSurface.errorResponse,
    },
    perSecond,
  )
}
