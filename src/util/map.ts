/** @module Maps as small caches: the value a map keeps for a key, and a bound on how many it keeps. */

/**
 * The value at `key`, made by `make(key)` and kept there on first use. `make` takes the key so a
 * caller can pass a function made once rather than a closure made per call.
 *
 * @example
 * const byModel = new Map<string, number[]>()
 * valueAt(byModel, 'gpt-4o', () => []).push(42)
 */
export function valueAt<K, V>(map: Map<K, V>, key: K, make: (key: K) => NoInfer<V>): V {
  let v = map.get(key)
  if (v === undefined) {
    v = make(key)
    map.set(key, v)
  }
  return v
}

/**
 * Sets `key` to `value`, first emptying `map` when it already holds `max` entries and `key` is not
 * one of them: a bound on memory, not an LRU (a cache of what is cheap to make again, refilled on
 * the next misses). Replacing a key's value never empties the map. `has` is asked only when the map
 * is full, so a caller that sets only after a miss pays one size check.
 *
 * @example
 * const counts = new Map<string, number>()
 * setBounded(counts, 'hello', 1, 8_192)
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max && !map.has(key)) map.clear()
  map.set(key, value)
}

/** `setBounded` for a set: adds `value`, first emptying `set` when it holds `max` others. */
export function addBounded<T>(set: Set<T>, value: T, max: number): void {
  if (set.size >= max && !set.has(value)) set.clear()
  set.add(value)
}
