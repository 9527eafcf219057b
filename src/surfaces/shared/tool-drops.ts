/**
 * @module
 * Whether every route of a request leaves its provider-run tools out (DESIGN §6, §11): the tools
 * only a provider of the surface's own wire runs (Anthropic's server tools, Responses' hosted
 * tools, Google's built-ins) reach no route when none passes through (`forwardFor`) and each
 * route's model says `unsupported_tools: drop` (what the surfaces' `translate` applies). Then they
 * are never sent, so the charge neither holds for them nor refuses them as uncounted; any route
 * that runs them keeps the charge.
 *
 * @example
 * everyRouteDrops(messagesSurface, [{ provider: openai, model: { unsupported_tools: 'drop', ... } }]) // true
 */
import type { CatalogueEntry } from '../../catalogue/entry.ts'
import type { ModelConfig } from '../../config/schema.ts'
import { forwardFor } from '../../pipeline/operations/chat-routes.ts'
import type { ChatSurface } from '../../pipeline/surface.ts'
import { GatewayError } from '../../util/errors.ts'
import { shownNames } from '../../util/text.ts'

/** What a translated route does with a tool its upstream cannot run: the model's `unsupported_tools`. */
export const toolPolicyOf = (model: Pick<ModelConfig, 'unsupported_tools'>): 'reject' | 'drop' =>
  model.unsupported_tools ?? 'reject'

export function everyRouteDrops<View>(
  surface: ChatSurface<View>,
  entries: readonly Pick<CatalogueEntry, 'provider' | 'model'>[],
): boolean {
  return entries.every((e) => forwardFor(surface, e) === undefined && toolPolicyOf(e.model) === 'drop')
}

/**
 * A tool choice (`param`) that makes the model call a tool, when every tool it could call was a
 * provider-run one this route dropped: the model would answer in text, unasked. 400 naming it.
 */
export function refuseForcedCallOfDropped(param: string, dropped: readonly string[]): never {
  throw new GatewayError(
    400,
    'unsupported_value',
    `${param} makes the model call a tool, but the only tools were ${shownNames(dropped)}, which this model's upstream cannot run (they were dropped). Send function tools, or leave ${param} out.`,
    { param },
  )
}
