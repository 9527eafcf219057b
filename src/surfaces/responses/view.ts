/**
 * @module
 * The Responses surface's view of a request, from body to canonical chat request: `decodeView`
 * parses, validates (stored-state fields refused) and decodes once; `featureUses` names what the
 * request uses in Responses terms; `translateView` applies the route's tool policy and the chat
 * defaults. Shared checks that name chat fields are renamed to this surface's fields here.
 *
 * @example
 * const view = decodeView(text)
 * checkFeatures(featureUses(view), view.input.temperature, entry.model, entry.id)
 * const { request, dropped } = translateView(view, entry)
 */

import type { CatalogueEntry } from '../../catalogue/entry.ts'
import { CHAT_DO_WITHOUT, checkReasoningOff, type FeatureUse, featureUse } from '../../catalogue/features.ts'
import { defaultTemperature } from '../../catalogue/temperature.ts'
import { upstreamModelName } from '../../config/models.ts'
import { parseJsonObject } from '../../json/parse-json-body.ts'
import type { ChatRequest } from '../../operations/chat.ts'
import { unservedParams } from '../../providers/unserved-params.ts'
import { GatewayError } from '../../util/errors.ts'
import { applyDefaults, dropReasoningOff } from '../shared/chat-defaults.ts'
import { detectFeatures } from '../shared/chat-features.ts'
import { refuseOpenAIOnly } from '../shared/openai-only.ts'
import { refuseForcedCallOfDropped, toolPolicyOf } from '../shared/tool-drops.ts'
import { type DecodedResponses, decodeResponses, logprobsParam } from './decode.ts'
import type { ResponsesRequestInput, ResponsesTool } from './request-schema.ts'
import { toolPolicy } from './tools.ts'
import { droppedFields, openaiChatFields } from './unknown-fields.ts'
import { RESPONSES_EXAMPLE, validateResponsesRequest } from './validate.ts'

export interface ResponsesView {
  input: ResponsesRequestInput
  decoded: DecodedResponses
  /** The tools the response object echoes (the dropped ones left out). Set by `translateView`. */
  served: readonly ResponsesTool[]
  /** The temperature used (defaults applied). Set by `translateView`. */
  temperature: number
  /**
   * The `service_tier` asked of the upstream (carried to an `openai` one only), which the response
   * reports until the upstream says which tier served it. Set by `translateView`.
   */
  tier?: string
}

/** Throws only 400 `GatewayError`s naming the Responses field. */
export function decodeView(
  text: string,
  limitsChecked = false,
  named?: (model: unknown) => void,
): ResponsesView {
  const body = parseJsonObject(text, RESPONSES_EXAMPLE, limitsChecked)
  named?.(body.model)
  return viewOf(validateResponsesRequest(body))
}

/** The view of a validated request (`validateResponsesRequest`): decoded once. */
export function viewOf(input: ResponsesRequestInput): ResponsesView {
  const decoded = decodeResponses(input)
  return { input, decoded, served: decoded.tools.all, temperature: input.temperature ?? 1 }
}

/**
 * How to do without a feature, in this surface's words; the chat wire's where they are the same
 * (`parallel_tool_calls`), or where the Responses request cannot use it (`n`, audio).
 */
const use = featureUse({
  ...CHAT_DO_WITHOUT,
  streaming: 'send "stream": false',
  tools: 'remove "tools", "tool_choice" and the function_call / function_call_output items',
  vision: 'remove the input_image and input_file parts',
  json_mode: 'remove "text.format"',
  json_schema: 'remove "text.format"',
  system_messages: 'move "instructions" and the system or developer messages into the first user message',
  reasoning: 'leave "reasoning.effort" out',
  logprobs: 'leave "top_logprobs" out and "message.output_text.logprobs" out of "include"',
})

export function featureUses(view: ResponsesView): FeatureUse[] {
  // `reasoning.effort: "none"` asks for no reasoning, which a model without it gives: not a use.
  const none = view.decoded.chat.reasoning_effort === 'none'
  const uses = detectFeatures(view.decoded.chat)
    .filter((chat) => !(none && chat.feature === 'reasoning'))
    .map((chat) => use(chat.feature, view.decoded.param(chat.param)))
  // Not in the chat form (a translated route refuses it), yet a use on every route.
  const logprobs = logprobsParam(view.input)
  if (logprobs) uses.push(use('logprobs', logprobs))
  return uses
}

/** The chat request for a translating adapter; names the hosted tools it dropped. */
export function translateView(
  view: ResponsesView,
  entry: CatalogueEntry,
): { request: ChatRequest; dropped: string[]; droppedParams: string[] } {
  const problem = view.decoded.problems[0]
  if (problem) throw problem
  const { dropped, served } = toolPolicy(view.decoded.tools, toolPolicyOf(entry.model))
  refuseChoiceOfDropped(view, dropped)
  let request: ChatRequest
  let droppedParams: string[]
  try {
    // What the chat form carries only to an OpenAI-compatible upstream (`moderation`).
    if (entry.provider.kind !== 'openai') refuseOpenAIOnly(view.decoded.chat)
    // An OpenAI-compatible chat API takes the prompt-cache hints and `service_tier` as they are.
    const carried = entry.provider.kind === 'openai' ? openaiChatFields(view.input) : {}
    request = Object.assign(
      applyDefaults(view.decoded.chat, entry.model, upstreamModelName(entry.model)),
      carried,
    )
    droppedParams = [
      ...droppedFields(view.input, carried),
      ...unservedParams(request, entry.provider.kind, view.decoded.param),
    ]
  } catch (e) {
    throw renamed(e, view.decoded)
  }
  dropReasoningOff(request, entry.model)
  view.served = served
  // The upstream's own default when none was sent; the response object names it as before.
  view.temperature = request.temperature ?? defaultTemperature(entry.model)
  // The tier asked for, as carried (`openaiChatFields`): none to another kind.
  view.tier = typeof request.service_tier === 'string' ? request.service_tier : undefined
  return { request, dropped, droppedParams }
}

/**
 * A `tool_choice` that makes the model call a tool, when every tool it could call was a hosted one
 * this route dropped (`unsupported_tools: drop`): the model would answer in text, unasked.
 */
function refuseChoiceOfDropped(view: ResponsesView, dropped: string[]): void {
  const choice = view.input.tool_choice
  if (!dropped.length || view.decoded.chat.tools || choice === undefined) return
  if (choice === 'auto' || choice === 'none') return
  refuseForcedCallOfDropped('tool_choice', dropped)
}

/**
 * `max_output_tokens` may not exceed the model's maximum, and `reasoning.effort` "none" needs a model
 * that can stop reasoning: on every route (pass-through too), before admission.
 */
export function checkOutputLimit(view: ResponsesView, entry: CatalogueEntry): void {
  checkReasoningOff(view.input.reasoning?.effort, 'reasoning.effort', entry.model, entry.id)
  const max = view.input.max_output_tokens
  if (max != null && max > entry.model.max_output_tokens) {
    throw new GatewayError(
      400,
      'invalid_value',
      `max_output_tokens is ${max}, but this model produces at most ${entry.model.max_output_tokens} tokens. Send at most ${entry.model.max_output_tokens}, or leave max_output_tokens out to get that maximum.`,
      { param: 'max_output_tokens' },
    )
  }
}

/** The shared checks name chat fields; this surface's client knows the Responses names. */
function renamed(e: unknown, decoded: DecodedResponses): unknown {
  if (!(e instanceof GatewayError) || e.param === null) return e
  const param = decoded.param(e.param)
  if (param === e.param) return e
  return new GatewayError(e.status, e.code, e.message.replaceAll(e.param, param), {
    param,
    type: e.type,
    headers: e.headers,
  })
}
