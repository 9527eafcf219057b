/**
 * @module
 * A key's model list (DESIGN §11, per-key limits) bounds every model a request can reach: the
 * model it names (403 `model_not_allowed` outside the list, token counters included) and every
 * model that may answer for it — a fallback outside the list is left out of the routes, neither
 * tried nor counted as a failure, and the reservation is priced over the models left. The list
 * takes what a plan's `models` takes (`*`, `tier:NAME`, `prefix/*`, a model's or an alias's id)
 * and is read by the same matcher; catalogue/reach.ts says through what an alias is reached.
 *
 * @example
 * keyReaches(['mock/cheapfail'], 'mock/good', undefined) // → false
 * keyReaches(['team/*'], 'team/fast', 'pro')           // → true
 * keyReaches(null, 'mock/good', undefined)             // → true (no list: every model the plan allows)
 */
import { planAllows } from './routing.ts'

/** Whether a key whose list is `list` (null or absent: no list) may reach the model `id` of `tier`. */
export function keyReaches(
  list: readonly string[] | null | undefined,
  id: string,
  tier: string | undefined,
): boolean {
  return !list || planAllows(list, id, { tier })
}
