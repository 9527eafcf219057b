/**
 * The steps a chat request passes before admission, as the pipeline runs them (`Pipeline.prepare`
 * then `checkAndTranslate`), without auth and the body reader: decode, route, the plan check,
 * features, the surface's limits, translate. Throws only `GatewayError`s.
 */
import type { Catalogue } from '../../../src/catalogue/routing.ts'
import { notInPlan } from '../../../src/catalogue/routing.ts'
import type { ModelConfig } from '../../../src/config/schema.ts'
import { checkAndTranslate } from '../../../src/pipeline/check.ts'
import { chatSurface } from '../../../src/surfaces/chat/index.ts'

/** `false` is a generic 403 `model_not_in_plan`; a throw is the check's own refusal. */
export type PlanCheck = (id: string, model: ModelConfig) => unknown

export function prepareChat(bodyText: string, catalogue: Catalogue, allow?: PlanCheck) {
  const decoded = chatSurface.decode(bodyText)
  const entry = catalogue.resolve(decoded.model)
  if (allow?.(entry.id, entry.model) === false) throw notInPlan(entry.id)
  const { request, includeUsage } = checkAndTranslate(chatSurface, decoded.view, entry, false)!
  return {
    request,
    id: entry.id,
    provider: entry.provider,
    model: entry.model,
    stream: decoded.stream,
    includeUsage,
  }
}
