/** @module The value a map keeps for a key, made on first use. */

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
