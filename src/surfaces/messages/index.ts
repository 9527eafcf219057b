/**
 * @module
 * The Anthropic Messages surface (`POST /v1/messages`) on the pipeline: `x-api-key` or Bearer
 * auth, Anthropic's request schema, pass-through to anthropic providers, translation to every
 * other kind, Anthropic's error shape and rate-limit header names.
 *
 * @example
 * pipeline.handle(messagesSurface, request, server, headers)
 */
import { apiKeyOrBearer } from '../../auth/authenticate.ts'
import type { CatalogueEntry } from '../../catalogue/entry.ts'
import { checkReasoningOff } from '../../catalogue/features.ts'
import { parseJsonObject } from '../../json/parse-json-body.ts'
import { compiledOnUse, validateWith } from '../../json/validation-error.ts'
import type { ChatSurface } from '../../pipeline/surface.ts'
import {
  droppedParamsHeader,
  droppedToolsHeader,
  kindReads,
  unservedParams,
} from '../../providers/unserved-params.ts'
import { GatewayError } from '../../util/errors.ts'
import { dropReasoningOff } from '../shared/chat-defaults.ts'
import { sessionOfUser } from '../shared/session-fields.ts'
import { everyRouteDrops, toolPolicyOf } from '../shared/tool-drops.ts'
import { convertFromCompletion } from './convert-from-completion.ts'
import { convertToChatRequest, isServerTool } from './convert-to-chat-request.ts'
import { messagesErrorResponse } from './errors.ts'
import { detectMessagesFeatures } from './features.ts'
import { unreadFields } from './lost-in-translation.ts'
import { messagesForwarding } from './pass-through.ts'
import { anthropicLimitHeaders } from './rate-headers.ts'
import { checkTools, type MessagesRequest, MessagesRequestSchema } from './request-schema.ts'
import { MessagesStreamEncoder } from './stream-encoder.ts'

const checker = compiledOnUse(MessagesRequestSchema)

export const MESSAGES_EXAMPLE =
  '{"model": "<prefix>/<model>", "max_tokens": 1024, "messages": [{"role": "user", "content": "Hello"}]}'

export const messagesSurface: ChatSurface<MessagesRequest> = {
  name: 'messages',
  inputParam: 'messages',
  operation: 'chat',
  credential: apiKeyOrBearer,
  decode(text, limitsChecked, _url, named) {
    const body = parseJsonObject(text, MESSAGES_EXAMPLE, limitsChecked)
    named?.(body.model)
    const view = validateWith(checker(), body)
    checkTools(view)
    return {
      model: view.model,
      view,
      stream: view.stream === true,
      session: sessionOfUser(view.metadata?.user_id),
    }
  },
  features: detectMessagesFeatures,
  // Server tools that every route leaves out (`unsupported_tools: drop`, no anthropic route) are not charged.
  body: (view, entries) =>
    view.tools?.some(isServerTool) && everyRouteDrops(messagesSurface, entries)
      ? { ...view, tools: view.tools.filter((t) => !isServerTool(t)) }
      : view,
  temperature: (view) => view.temperature,
  checkLimits(view, entry) {
    checkMaxTokens(view, entry)
    // On every route: an anthropic model declared always_reasons cannot honour it either.
    checkReasoningOff(
      view.thinking?.type === 'disabled' ? 'none' : undefined,
      'thinking',
      entry.model,
      entry.id,
      {
        asked: 'thinking {"type": "disabled"}',
        least: 'the least thinking ({"type": "enabled", "budget_tokens": 1024})',
      },
    )
  },
  translate(view, entry) {
    const { request, dropped: tools } = convertToChatRequest(
      view,
      entry.model.upstream_name ?? entry.model.name,
      toolPolicyOf(entry.model),
    )
    dropReasoningOff(request, entry.model)
    const kind = entry.provider.kind
    // Anthropic's top_k is not OpenAI's: an OpenAI-compatible upstream would refuse it, the demo ignore it.
    const unread = unreadFields(view)
    if (request.top_k !== undefined && !kindReads(kind, 'top_k')) {
      delete request.top_k
      unread.push('top_k')
    }
    const dropped = [...unread, ...unservedParams(request, kind, (p) => MESSAGES_FIELD[p] ?? p)]
    const headers = { ...droppedToolsHeader(tools), ...droppedParamsHeader(dropped) }
    return { request, includeUsage: true, headers }
  },
  encodeCompletion: (completion, ctx) => convertFromCompletion(completion, ctx.modelId),
  streamEncoder: (ctx) => new MessagesStreamEncoder(ctx.modelId),
  forward: messagesForwarding,
  limitHeaders: anthropicLimitHeaders,
  errorResponse: messagesErrorResponse,
}

/** The Messages field behind a field of the chat form (`convert-to-chat-request.ts`). */
const MESSAGES_FIELD: Record<string, string> = {
  user: 'metadata.user_id',
  stop: 'stop_sequences',
  reasoning_effort: 'thinking',
  response_format: 'output_config.format',
}

/** `max_tokens` is required here (Anthropic's rule), and may not exceed the model's maximum. */
function checkMaxTokens(view: MessagesRequest, entry: CatalogueEntry): void {
  const max = entry.model.max_output_tokens
  if (view.max_tokens > max) {
    throw new GatewayError(
      400,
      'invalid_value',
      `max_tokens is ${view.max_tokens}, but the model "${entry.id}" produces at most ${max} tokens. Send at most ${max}.`,
      { param: 'max_tokens' },
    )
  }
}

export { messagesErrorResponse } from './errors.ts'
