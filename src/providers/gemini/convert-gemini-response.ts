/**
 * @module
 * A Gemini `generateContent` response → an OpenAI `chat.completion`.
 */
import type { ChatCompletion } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { assistantMessage } from '../shared/assistant-message.ts'
import { convertGeminiUsage } from './convert-gemini-usage.ts'
import type { GeminiResponse } from './gemini-types.ts'
import { mapGeminiFinishReason } from './map-gemini-finish-reason.ts'
import { readGeminiParts } from './read-gemini-parts.ts'

/** `chatcmpl-<responseId>`; Gemini may omit the id, then a random one. */
export function completionId(responseId: string | undefined): string {
  return `chatcmpl-${responseId || crypto.randomUUID().replaceAll('-', '')}`
}

/**
 * Each candidate becomes the choice at its `index`. A prompt Gemini blocked has no candidates:
 * it becomes one choice with no text (`content: null`, as OpenAI gives a message without text)
 * and `finish_reason: 'content_filter'`, as OpenAI reports filtering; the stream says the same.
 *
 * @param model the model name to report (the gateway rewrites it to the prefixed id).
 */
export function convertGeminiResponse(res: GeminiResponse, model: string): ChatCompletion {
  const candidates = res.candidates ?? []
  if (candidates.length === 0 && !res.promptFeedback?.blockReason) {
    throw new GatewayError(
      502,
      'upstream_invalid_response',
      'Gemini answered without any candidate. Retry the request.',
    )
  }
  const choices: ChatCompletion['choices'] = candidates.map((candidate, position) => {
    const { text, reasoning, toolCalls } = readGeminiParts(candidate.content?.parts)
    return {
      index: candidate.index ?? position,
      message: assistantMessage(text, toolCalls, reasoning),
      finish_reason: mapGeminiFinishReason(candidate.finishReason, toolCalls.length > 0),
      logprobs: null,
    }
  })
  if (choices.length === 0) {
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null },
      finish_reason: 'content_filter',
      logprobs: null,
    })
  }
  return {
    id: completionId(res.responseId),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: choices.sort((a, b) => a.index - b.index),
    usage: convertGeminiUsage(res.usageMetadata),
  }
}
