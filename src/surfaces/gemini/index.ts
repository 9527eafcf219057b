/**
 * @module
 * The Gemini surface (DESIGN §14): `POST /v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent` on the pipeline — keys from `x-goog-api-key`, `?key=` or a bearer;
 * Google's request, response, stream and error shapes; pass-through to gemini providers
 * (pass-through.ts), the canonical chat form to every other kind. `:countTokens`,
 * `:embedContent` and `:batchEmbedContents` are surfaces of their own operations
 * (count-tokens.ts, embed.ts); `geminiSurfaces` names each method's.
 *
 * @example
 * geminiSurfaces(20)[geminiTarget(request.url)!.method] // undefined: not a method served here (404)
 */
import { googleApiKey } from '../../auth/authenticate.ts'
import { checkReasoningOff } from '../../catalogue/features.ts'
import { upstreamModelName } from '../../config/models.ts'
import { compiledOnUse, validateWith } from '../../json/validation-error.ts'
import type { ChatSurface, Surface } from '../../pipeline/surface.ts'
import { droppedParamsHeader, droppedToolsHeader, unservedParams } from '../../providers/unserved-params.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import { dropReasoningOff } from '../shared/chat-defaults.ts'
import { everyRouteDrops, toolPolicyOf } from '../shared/tool-drops.ts'
import { chargedInput } from './charged-input.ts'
import { builtInTools, convertToChatRequest } from './convert-to-chat-request.ts'
import { geminiCountTokensSurface } from './count-tokens.ts'
import { batchEmbedContentsSurface, embedContentSurface } from './embed.ts'
import { encodeCompletion } from './encode.ts'
import { geminiErrorResponse } from './errors.ts'
import { detectGeminiFeatures } from './features.ts'
import { refuseUndecodableInlineData } from './inline-data.ts'
import { unreadFields } from './lost-in-translation.ts'
import { geminiForwarding } from './pass-through.ts'
import { GenerateContentRequestSchema } from './request-schema.ts'
import { GeminiStreamEncoder } from './stream-encoder.ts'
import { type GeminiView, geminiBody, targetOf } from './view.ts'

const checker = compiledOnUse(GenerateContentRequestSchema)

/** The methods this surface serves; a path naming another comes here to be refused (404). */
const GENERATE_METHODS = new Set(['generateContent', 'streamGenerateContent'])

/** The Gemini field behind a field of the chat form (for the dropped-parameters header). */
const GEMINI_FIELD: Record<string, string> = {
  temperature: 'generationConfig.temperature',
  top_p: 'generationConfig.topP',
  top_k: 'generationConfig.topK',
  seed: 'generationConfig.seed',
  presence_penalty: 'generationConfig.presencePenalty',
  frequency_penalty: 'generationConfig.frequencyPenalty',
  stop: 'generationConfig.stopSequences',
  reasoning_effort: 'generationConfig.thinkingConfig',
}

export const geminiSurface: ChatSurface<GeminiView> = {
  name: 'gemini',
  inputParam: 'contents',
  operation: 'chat',
  credential: googleApiKey,
  checkRoute(url) {
    const { method } = targetOf(url)
    if (!GENERATE_METHODS.has(method))
      throw new GatewayError(
        404,
        'not_found',
        `Unknown Gemini method "${clip(method)}". Served: generateContent, streamGenerateContent, countTokens, embedContent, batchEmbedContents.`,
      )
  },
  decode(text, limitsChecked, url, named) {
    const target = targetOf(url)
    named?.(target.model)
    const body = validateWith(checker(), geminiBody(text, limitsChecked))
    refuseUndecodableInlineData(body)
    const stream = target.method === 'streamGenerateContent'
    return { model: target.model, view: { ...target, stream, body }, stream }
  },
  features: (view) => detectGeminiFeatures(view.body, view.stream),
  // What the charge reads: the input bound's parts, the output cap, choices (charged-input.ts).
  // Built-ins that every route leaves out (`unsupported_tools: drop` on a model Google does not serve) are not charged.
  body: (view, entries) => chargedInput(view.body, everyRouteDrops(geminiSurface, entries)),
  temperature: (view) => view.body.generationConfig?.temperature,
  checkLimits(view, entry) {
    const max = entry.model.max_output_tokens
    const asked = view.body.generationConfig?.maxOutputTokens
    if (asked !== undefined && max !== undefined && asked > max)
      throw new GatewayError(
        400,
        'invalid_value',
        `generationConfig.maxOutputTokens is ${asked}, but the model "${entry.id}" produces at most ${max} tokens. Send at most ${max}.`,
        { param: 'generationConfig.maxOutputTokens' },
      )
    checkReasoningOff(
      view.body.generationConfig?.thinkingConfig?.thinkingBudget === 0 ? 'none' : undefined,
      'generationConfig.thinkingConfig.thinkingBudget',
      entry.model,
      entry.id,
      { asked: 'thinkingBudget 0', least: 'the least thinking (thinkingBudget 1024)' },
    )
  },
  translate(view, entry) {
    const policy = toolPolicyOf(entry.model)
    const request = convertToChatRequest(view.body, upstreamModelName(entry.model), policy)
    dropReasoningOff(request, entry.model)
    const dropped = [
      ...unreadFields(view.body),
      ...unservedParams(request, entry.provider.kind, (p) => GEMINI_FIELD[p] ?? p),
    ]
    const tools = policy === 'drop' ? builtInTools(view.body) : []
    return {
      request,
      includeUsage: true,
      headers: { ...droppedToolsHeader(tools), ...droppedParamsHeader(dropped) },
    }
  },
  encodeCompletion: (completion, ctx) =>
    encodeCompletion(
      completion,
      ctx.modelId,
      ctx.view.body.generationConfig?.thinkingConfig?.includeThoughts === true,
    ),
  streamEncoder: (ctx) =>
    new GeminiStreamEncoder(
      ctx.modelId,
      ctx.view.sse,
      ctx.view.body.generationConfig?.thinkingConfig?.includeThoughts === true,
    ),
  forward: geminiForwarding,
  errorResponse: geminiErrorResponse,
}

/**
 * Each method's surface (`:generateContent`, `:countTokens`, …); the count's throttle allows
 * `perSecond` calls per key.
 */
export function geminiSurfaces(perSecond: number): Record<string, Surface<any>> {
  return {
    generateContent: geminiSurface,
    streamGenerateContent: geminiSurface,
    countTokens: geminiCountTokensSurface(perSecond),
    embedContent: embedContentSurface,
    batchEmbedContents: batchEmbedContentsSurface,
  }
}

export { geminiErrorResponse } from './errors.ts'
