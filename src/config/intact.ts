/**
 * @module
 * Reading a config document that may have failed its schema: the cross checks run beside the
 * schema's problems (so `config check` lists both at once) and read only what `Intact` passes.
 *
 * @example
 * const intact = intactExcept(['/plans/free/rpm'])
 * intact('/plans/free/models') // true
 * intact('/plans/free')        // false: something inside it failed
 */

export interface Problem {
  path: string
  message: string
}

/** Whether the value at a path passed the schema: no problem at it, inside it, or above it. */
export type Intact = (path: string) => boolean

/** `Intact` for a document whose schema problems are at `bad` (JSON pointers). */
export function intactExcept(bad: string[]): Intact {
  return (path) => !bad.some((b) => b === path || b.startsWith(`${path}/`) || path.startsWith(`${b}/`))
}

/** A path step, escaped as TypeBox escapes it (RFC 6901), so paths from both agree. */
export const step = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

/** The items of what should be an array, or none. */
export const list = <T>(v: T[] | undefined): T[] => (Array.isArray(v) ? v : [])

/** The entries of what should be a mapping, or none. */
export const entries = <T>(v: Record<string, T> | undefined): Array<[string, T]> =>
  isMap(v) ? Object.entries(v as Record<string, T>) : []

export const isMap = (v: unknown): boolean => !!v && typeof v === 'object' && !Array.isArray(v)
