/**
 * @module
 * A key's model list (DESIGN §11, per-key limits) bounds every model a request can reach: the
 * model it names (403 `model_not_allowed` outside the list, token counters included) and every
 * model that may answer for it — a fallback outside the list is left out of the routes, neither
 * tried nor counted as a failure, and the reservation is priced over the models left. One
 * predicate over model ids, so aliases and pool members plug in where they resolve.
 *
 * @example
 * keyReaches(['mock/cheapfail'], 'mock/good') // → false
 * keyReaches(null, 'mock/good')               // → true (no list: every model the plan allows)
 */
import { modelNotAllowedError } from '../limits/refusals.ts'

/** Whether a key whose list is `list` (null or absent: no list) may reach the model `id`. */
export function keyReaches(list: readonly string[] | null | undefined, id: string): boolean {
  return !list || list.includes(id)
}

/** Throws 403 `model_not_allowed` when the model the request names is outside the key's list. */
export function assertKeyReaches(list: readonly string[] | null | undefined, id: string): void {
  if (!keyReaches(list, id)) throw modelNotAllowedError(id, [...list!])
}
