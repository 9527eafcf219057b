/**
 * @module
 * Nesting limit for request bodies. `JSON.parse` accepts any depth, but `JSON.stringify` (used to
 * send the request upstream) and recursive schema converters overflow the stack somewhere past a few
 * thousand levels, which would surface as a 500. Real requests stay far below the limit: a tool's
 * JSON Schema ten objects deep is about 25 levels.
 */

export const MAX_JSON_DEPTH = 100

/** Whether `value` nests deeper than `max` levels (the top-level object is level 1). */
export function exceedsDepth(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  return visit(value, max, null)
}

/**
 * The keys leading to the first place that nests deeper than `max`, or `null`. Recursion stops at
 * `max`, so the walk itself cannot overflow.
 */
export function deepestPath(value: unknown, max: number = MAX_JSON_DEPTH): string[] | null {
  const path: string[] = []
  return visit(value, max, path) ? path : null
}

/** `path` is filled only when given: the hot path (`exceedsDepth`) allocates nothing. */
function visit(value: unknown, budget: number, path: string[] | null): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (budget === 0) return true
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path?.push(String(i))
      if (visit(value[i], budget - 1, path)) return true
      path?.pop()
    }
    return false
  }
  for (const key in value) {
    path?.push(key)
    if (visit(ownValue(value, key), budget - 1, path)) return true
    path?.pop()
  }
  return false
}

/** `obj.__proto__` reads the prototype, not a `"__proto__"` key that `JSON.parse` made an own property. */
function ownValue(obj: object, key: string): unknown {
  return key === '__proto__'
    ? Object.getOwnPropertyDescriptor(obj, key)?.value
    : (obj as Record<string, unknown>)[key]
}
