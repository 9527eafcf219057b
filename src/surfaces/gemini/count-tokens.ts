/**
 * @module
 * `:countTokens` (the count_tokens operation): `{"contents"}` or `{"generateContentRequest"}` →
 * `{"totalTokens"}`. Gemini providers count upstream (the body passed through); for every other
 * kind the gateway counts the request's chat form (o200k_base, an estimate for other tokenizers,
 * said so in the `x-switchyard-token-count` header). Like every count, it needs a key and a model
 * the plan includes, is never admitted against the limits, and has its own per-key throttle.
 */
import { Type as T } from '@sinclair/typebox'
import { googleApiKey } from '../../auth/authenticate.ts'
import { upstreamModelName } from '../../config/models.ts'
import { compiledOnUse, validateWith } from '../../json/validation-error.ts'
import type { CountTokensSurface } from '../../pipeline/surface.ts'
import { GatewayError } from '../../util/errors.ts'
import { countTokensSurface, estimateChatTokens } from '../count-tokens.ts'
import { convertToChatRequest } from './convert-to-chat-request.ts'
import { geminiErrorResponse } from './errors.ts'
import { refuseUndecodableInlineData } from './inline-data.ts'
import { Content, type GenerateContentRequest, GenerateContentRequestSchema } from './request-schema.ts'
import { geminiBody, targetOf } from './view.ts'

/**
 * `contents` alone, or a whole `generateContentRequest`; the other fields of a generateContent
 * request beside `contents` (the SDK's `config`: `generationConfig`, `tools`, …) typed as
 * `:generateContent` types them, so a body it refuses is not counted.
 */
const CountRequest = T.Object(
  {
    ...GenerateContentRequestSchema.properties,
    contents: T.Optional(T.Array(Content)),
    generateContentRequest: T.Optional(GenerateContentRequestSchema),
  },
  { additionalProperties: true },
)
const checker = compiledOnUse(CountRequest)

export interface GeminiCountView {
  /** The request counted, as a generateContent request. */
  request: GenerateContentRequest
  text: string
}

export function geminiCountTokensSurface(perSecond: number): CountTokensSurface<GeminiCountView> {
  return countTokensSurface<GeminiCountView>(
    {
      name: 'gemini',
      inputParam: 'contents',
      endpoint: 'countTokens',
      credential: googleApiKey,
      decode(text, limitsChecked, url, named) {
        const target = targetOf(url)
        named?.(target.model)
        const body = validateWith(checker(), geminiBody(text, limitsChecked))
        const request =
          body.generateContentRequest ?? (body.contents?.length ? { contents: body.contents } : null)
        if (!request)
          throw new GatewayError(
            400,
            'missing_required_parameter',
            'Send contents (or generateContentRequest) to count.',
            {
              param: 'contents',
            },
          )
        refuseUndecodableInlineData(request, body.generateContentRequest ? 'generateContentRequest.' : '')
        return { model: target.model, view: { request, text }, stream: false }
      },
      upstream: (view, entry) =>
        entry.provider.kind === 'gemini'
          ? {
              path: `/models/${encodeURIComponent(upstreamModelName(entry.model))}:countTokens`,
              body: view.text,
              headers: {},
            }
          : null,
      async estimate(view, entry) {
        // As `entry`'s upstream would get it: built-ins its `unsupported_tools: drop` leaves out are not counted.
        const chat = convertToChatRequest(view.request, '', entry.model.unsupported_tools)
        return estimateChatTokens(chat.messages, chat.tools)
      },
      answer: (inputTokens) => ({ totalTokens: inputTokens }),
      errorResponse: geminiErrorResponse,
    },
    perSecond,
  )
}
