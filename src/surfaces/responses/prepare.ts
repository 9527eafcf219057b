/**
 * @module
 * Everything the gateway does to a Responses body before calling a provider, in the same order as
 * for chat (DESIGN §5): parse and validate (400, stored-state fields refused), route the model id
 * (400/404), the plan (403), tools the route cannot serve (400 or dropped), the model's features
 * and temperature range (400, named by their Responses field), defaults and token limits.
 *
 * @example
 * const r = prepareResponses(text, catalogue, (id, model) => assertPlanAllows(plan, id, model))
 * r.passthrough ? responsesUpstream.create(r.body, ctx) : adapter.complete(r.request, ctx)
 */
import type { ModelConfig, ProviderConfig } from '../../config/schema.ts'
import {
  applyDefaults,
  type Catalogue,
  checkModelSupport,
  notInPlan,
  type PlanCheck,
  parseChatBody,
  upstreamModelName,
} from '../../gateway/index.ts'
import type { ChatRequest } from '../../providers/types.ts'
import { GatewayError } from '../../util/errors.ts'
import { type DecodedResponses, decodeResponses } from './decode.ts'
import type { ResponsesRequestInput } from './request-schema.ts'
import { RESPONSES_EXAMPLE, validateResponsesRequest } from './validate.ts'

export interface PreparedResponses {
  /** The client's request as validated (`model` still prefixed). */
  input: ResponsesRequestInput
  /** The chat form for translating adapters: defaults applied, `model` = upstream name. */
  request: ChatRequest
  decoded: DecodedResponses
  /** The upstream speaks Responses itself: send `upstreamBody`, pass its events through. */
  passthrough: boolean
  /** For pass-through: the client's body with the upstream model name and `store: false`. */
  upstreamBody: Record<string, unknown>
  /** The client's prefixed model id, which responses report as `model`. */
  id: string
  provider: ProviderConfig
  model: ModelConfig
  stream: boolean
}

/** Throws only `GatewayError`s with a 4xx status, whatever the body. */
export function prepareResponses(text: string, catalogue: Catalogue, allow?: PlanCheck): PreparedResponses {
  const input = validateResponsesRequest(parseChatBody(text, RESPONSES_EXAMPLE))
  const entry = catalogue.resolve(input.model)
  if (allow?.(entry.id, entry.model) === false) throw notInPlan(entry.id)
  const passthrough = entry.provider.kind === 'openai' && entry.provider.wire === 'responses'
  const decoded = decodeResponses(input, passthrough ? 'keep' : (entry.model.unsupported_tools ?? 'reject'))
  const upstreamName = upstreamModelName(entry.model)
  let request: ChatRequest
  try {
    checkModelSupport(decoded.chat, entry.model, entry.id)
    request = applyDefaults(decoded.chat, entry.model, upstreamName)
  } catch (e) {
    throw renamed(e, decoded)
  }
  return {
    input,
    request,
    decoded,
    passthrough,
    // Stateless: nothing is kept at the upstream either, whatever the client asked.
    upstreamBody: { ...input, model: upstreamName, store: false },
    id: entry.id,
    provider: entry.provider,
    model: entry.model,
    stream: input.stream === true,
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
