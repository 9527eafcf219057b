/**
 * @module
 * A key's model list (DESIGN §11, per-key limits) bounds every model a request can reach: the
 * model it names (403 `model_not_allowed` outside the list, token counters included) and every
 * model that may answer for it — a fallback outside the list is left out of the routes, neither
 * tried nor counted as a failure, and the reservation is priced over the models left. One
 * predicate over model ids: an alias is reached by its id (catalogue/reach.ts says through what).
 *
 * @example
 * keyReaches(['mock/cheapfail'], 'mock/good') // → false
 * keyReaches(null, 'mock/good')               // → true (no list: every model the plan allows)
 */

/** Whether a key whose list is `list` (null or absent: no list) may reach the model `id`. */
export function keyReaches(list: readonly string[] | null | undefined, id: string): boolean {
  return !list || list.includes(id)
}
