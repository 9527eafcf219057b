/**
 * @module
 * Everything the gateway does to a chat body before calling a provider, in DESIGN §5's order:
 * parse and validate (400), route the model id (400/404), the plan (403), the model's features and
 * temperature range (400), then defaults and token limits (400).
 *
 * @example
 * const plan = { name: 'free', models: ['tier:free'] }
 * const chat = prepareChat(await request.text(), catalogue, (id, model) => assertPlanAllows(plan, id, model))
 * const adapter = adapters[chat.provider.kind]
 * chat.stream ? adapter.stream(chat.request, ctx) : adapter.complete(chat.request, ctx)
 */
import type { ModelConfig, ProviderConfig } from '../../config/schema.ts'
import type { ChatRequest } from '../../providers/types.ts'
import { applyDefaults, upstreamModelName } from './defaults.ts'
import { checkModelSupport } from '../../catalogue/features.ts'
import { type Catalogue, notInPlan } from '../../catalogue/routing.ts'
import { parseChatBody, validateChatRequest } from './validate.ts'

/**
 * The caller's plan check, run between routing and the feature check. It may throw its own
 * `GatewayError` (e.g. `assertPlanAllows`, which names the plan); returning `false` is a generic
 * 403 `model_not_in_plan`; any other return value admits the model.
 */
export type PlanCheck = (id: string, model: ModelConfig) => unknown

export interface PreparedChat {
  /** What the adapter receives: validated, defaults applied, `model` = upstream name. */
  request: ChatRequest
  /** The client's prefixed model id, which responses report as `model`. */
  id: string
  provider: ProviderConfig
  model: ModelConfig
  stream: boolean
  /** `stream_options.include_usage` on a streaming request: send the final usage chunk. */
  includeUsage: boolean
}

/** Throws only `GatewayError`s with a 4xx status, whatever the body. */
export function prepareChat(bodyText: string, catalogue: Catalogue, allow?: PlanCheck): PreparedChat {
  const input = validateChatRequest(parseChatBody(bodyText))
  const entry = catalogue.resolve(input.model)
  if (allow?.(entry.id, entry.model) === false) throw notInPlan(entry.id)
  checkModelSupport(input, entry.model, entry.id)
  const request = applyDefaults(input, entry.model, upstreamModelName(entry.model))
  const stream = request.stream === true
  return {
    request,
    id: entry.id,
    provider: entry.provider,
    model: entry.model,
    stream,
    includeUsage: stream && request.stream_options?.include_usage === true,
  }
}
