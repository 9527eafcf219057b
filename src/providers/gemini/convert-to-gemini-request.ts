/**
 * @module
 * A validated OpenAI chat request → the body of `generateContent` / `streamGenerateContent`.
 */
import type { ChatRequest } from '../../operations/chat.ts'
import { applyParamMap, type ParamRule, toStopSequences } from '../shared/apply-param-map.ts'
import { convertToGeminiContents } from './convert-to-gemini-contents.ts'
import { geminiThinkingConfig } from './gemini-thinking.ts'
import type { GeminiRequest } from './gemini-types.ts'
import { prepareGeminiTools } from './prepare-gemini-tools.ts'

type ResponseFormat = NonNullable<ChatRequest['response_format']>

/** OpenAI parameters → `generationConfig`. */
export const GEMINI_PARAMS: readonly ParamRule[] = [
  { param: 'temperature', to: 'generationConfig.temperature' },
  { param: 'top_p', to: 'generationConfig.topP' },
  // Not OpenAI's, but the common extension (vLLM, OpenRouter), and Gemini has it.
  { param: 'top_k', to: 'generationConfig.topK' },
  // max_completion_tokens supersedes the deprecated max_tokens when both are sent.
  {
    param: 'max_tokens',
    to: 'generationConfig.maxOutputTokens',
    transform: (max: number, req) => (req.max_completion_tokens == null ? max : undefined),
  },
  { param: 'max_completion_tokens', to: 'generationConfig.maxOutputTokens' },
  { param: 'stop', to: 'generationConfig.stopSequences', transform: toStopSequences },
  { param: 'n', to: 'generationConfig.candidateCount' },
  { param: 'seed', to: 'generationConfig.seed' },
  { param: 'presence_penalty', to: 'generationConfig.presencePenalty' },
  { param: 'frequency_penalty', to: 'generationConfig.frequencyPenalty' },
  {
    param: 'response_format',
    to: 'generationConfig.responseMimeType',
    transform: (format: ResponseFormat) => (format.type === 'text' ? undefined : 'application/json'),
  },
  // JSON Schema as OpenAI clients write it; the older `responseSchema` takes an OpenAPI subset
  // and rejects `additionalProperties`, which strict OpenAI schemas always carry.
  {
    param: 'response_format',
    to: 'generationConfig.responseJsonSchema',
    transform: (format: ResponseFormat) =>
      format.type === 'json_schema' ? format.json_schema.schema : undefined,
  },
  { param: 'reasoning_effort', to: 'generationConfig.thinkingConfig', transform: geminiThinkingConfig },
]
// `logprobs` is a kind limit (config/kind-limits.ts): the feature check refuses it.
// What no rule reads is refused or dropped by name before admission (`unserved-params.ts`).

/**
 * @example
 * convertToGeminiRequest({ model: 'gemini-2.5-flash', messages, temperature: 0.2 })
 * // { contents: [...], generationConfig: { temperature: 0.2 } }
 */
export function convertToGeminiRequest(req: ChatRequest): GeminiRequest {
  const body: GeminiRequest = { ...convertToGeminiContents(req.messages), ...prepareGeminiTools(req) }
  applyParamMap(GEMINI_PARAMS, req, body as unknown as Record<string, unknown>)
  return body
}
