/**
 * @module
 * The OpenAI Chat Completions surface (`POST /v1/chat/completions`) on the pipeline. Its wire is
 * the gateway's canonical form, so translating is applying defaults and encoding is putting the
 * client's model id back; to openai providers (`wire: chat`) the text passes through (`forward.ts`).
 *
 * @example
 * pipeline.handle(chatSurface, request, server, headers)
 */

import { bearer } from '../../auth/authenticate.ts'
import { checkReasoningOff } from '../../catalogue/features.ts'
import { upstreamModelName } from '../../config/models.ts'
import { parseJsonObject } from '../../json/parse-json-body.ts'
import type { ChatSurface } from '../../pipeline/surface.ts'
import { droppedParamsHeader, unservedParams } from '../../providers/unserved-params.ts'
import { errorResponse } from '../../util/errors.ts'
import { applyDefaults, checkTokenLimits } from '../shared/chat-defaults.ts'
import { detectFeatures } from '../shared/chat-features.ts'
import type { ChatRequestInput } from '../shared/chat-request-schema.ts'
import { refuseOpenAIOnly } from '../shared/openai-only.ts'
import { cacheKeyOf } from '../shared/session-fields.ts'
import { chatForwarding } from './forward.ts'
import { ChatChunkEncoder } from './stream-encoder.ts'
import { CHAT_EXAMPLE, validateChatRequest } from './validate.ts'

export const chatSurface: ChatSurface<ChatRequestInput> = {
  name: 'chat',
  inputParam: 'messages',
  operation: 'chat',
  credential: (headers) => bearer(headers.get('authorization')),
  decode(text, limitsChecked, _url, named) {
    const body = parseJsonObject(text, CHAT_EXAMPLE, limitsChecked)
    named?.(body.model)
    const view = validateChatRequest(body)
    return { model: view.model, view, stream: view.stream === true, session: cacheKeyOf(view) }
  },
  features: detectFeatures,
  temperature: (view) => view.temperature,
  checkLimits(view, entry) {
    checkTokenLimits(view, entry.model)
    checkReasoningOff(view.reasoning_effort, 'reasoning_effort', entry.model, entry.id)
  },
  translate(view, entry) {
    refuseOpenAIOnly(view)
    const request = applyDefaults(view, entry.model, upstreamModelName(entry.model))
    const dropped = unservedParams(request, entry.provider.kind)
    const includeUsage = request.stream === true && request.stream_options?.include_usage === true
    return { request, includeUsage, headers: droppedParamsHeader(dropped) }
  },
  // The adapter already reported the client's id (the pipeline sets `model`).
  encodeCompletion: (completion) => completion,
  streamEncoder: (ctx) => new ChatChunkEncoder(ctx.modelId, ctx.includeUsage),
  forward: chatForwarding,
  errorResponse,
}

export { ChatChunkEncoder } from './stream-encoder.ts'
