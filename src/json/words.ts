/**
 * @module
 * JSON values and schema bounds in words, for the validation explainers (the surfaces' bodies,
 * `validation-error.ts`; the admin and console routes', server/route-validation.ts).
 *
 * @example
 * kindOf([1]) // 'array'
 * `a string${extent(1, 64, ' characters')}` // 'a string of 1 to 64 characters'
 */

export type JsonKind = 'null' | 'array' | 'object' | 'string' | 'number' | 'boolean' | 'undefined' | 'other'

/** The JSON type of a value (`undefined`: absent; `other`: nothing JSON can hold). */
export function kindOf(value: unknown): JsonKind {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  const type = typeof value
  return type === 'object' ||
    type === 'string' ||
    type === 'number' ||
    type === 'boolean' ||
    type === 'undefined'
    ? type
    : 'other'
}

/**
 * A bound in words, with a leading space, or '' for none: " of 1 to 64 characters",
 * " of at least 1 characters", " of at most 64 characters". `both` words a closed range (numbers
 * say "between 0 and 2" or "from 1 to 36500").
 */
export function extent(
  min: number | undefined,
  max: number | undefined,
  unit = '',
  both = (a: number, b: number) => `of ${a} to ${b}${unit}`,
): string {
  if (min !== undefined && max !== undefined) return ` ${both(min, max)}`
  if (min !== undefined) return ` of at least ${min}${unit}`
  if (max !== undefined) return ` of at most ${max}${unit}`
  return ''
}
