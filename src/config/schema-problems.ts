/**
 * @module
 * TypeBox's errors for a config document, worded for the person editing the file: one problem per
 * path, an unknown key called one, and a map key outside its pattern named with the pattern (its
 * value still checked under it). A secret is never quoted (see `Secret`).
 *
 * @example
 * schemaProblems(ConfigSchema, doc) // [{ path: '/plans/pro plan', message: "plan name 'pro plan' ..." }]
 */
import type { TSchema } from '@sinclair/typebox'
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { isMap, step } from './intact.ts'

export interface SchemaProblem {
  path: string
  message: string
}

/**
 * Every problem `value` has against `schema`, the first one per path, each with its path.
 * `fromEnv` says which paths' values came from the environment: those are not quoted either.
 */
export function schemaProblems(
  schema: TSchema,
  value: unknown,
  base = '',
  fromEnv: (path: string) => boolean = () => false,
): SchemaProblem[] {
  // A valid document, every start's, is checked without the walk that builds errors: cold, that
  // walk was ~20–30 ms of CPU at every command's start (docs/benchmarks/suite-cpu.md, stop 60).
  if (Value.Check(schema, value)) return []
  const out: SchemaProblem[] = []
  const seen = new Set<string>()
  const push = (p: SchemaProblem) => {
    if (seen.has(p.path)) return
    seen.add(p.path)
    out.push(p)
  }
  for (const e of Value.Errors(schema, value)) {
    if (e.type === ValueErrorType.ObjectAdditionalProperties && e.schema.keyName) {
      for (const p of mapKeyProblems(e, value, base, fromEnv)) push(p)
    } else if (e.type === ValueErrorType.Union) {
      for (const p of unionProblems(e, base, fromEnv)) push(p)
    } else {
      const path = at(base, e.path)
      push({ path, message: describe(e, quote(e, fromEnv(path))) })
    }
  }
  return out
}

/**
 * One problem in the words of the rest: what the setting must be, and what it got. TypeBox's own
 * ("Expected string length greater or equal to 16") named the check, not the setting's rule.
 */
function describe(e: ValueError, show: (v: unknown) => string): string {
  const got = e.value === undefined ? 'missing' : `got ${show(e.value)}`
  switch (e.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return 'unknown key (check the spelling)'
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required (missing)'
    case ValueErrorType.ArrayUniqueItems:
      return `must name each value once (${repeated(e.value, show)} is there twice)`
    default:
      return `must be ${alternative(e.schema)} (${got})`
  }
}

/** The first value a list holds twice, as the error quotes it. */
function repeated(v: unknown, show: (v: unknown) => string): string {
  const seen = new Set<string>()
  for (const item of Array.isArray(v) ? v : []) {
    const key = JSON.stringify(item)
    if (seen.has(key)) return show(item)
    seen.add(key)
  }
  return 'a value'
}

/**
 * TypeBox says only "Expected union value". A mapping where one branch is a mapping gets that
 * branch's own problems, each at its path (`on_expiry: { downgrade: free, after: 1 }` → `after`
 * is an unknown key); anything else is told the values the setting takes.
 */
function unionProblems(e: ValueError, base: string, fromEnv: (path: string) => boolean): SchemaProblem[] {
  const branches = (e.schema.anyOf as TSchema[]).flatMap((b) => (b.anyOf ? (b.anyOf as TSchema[]) : [b]))
  const mappings = branches.filter((b) => b.type === 'object')
  if (mappings.length === 1 && isMap(e.value))
    return schemaProblems(mappings[0]!, e.value, base + e.path, fromEnv)
  // Likewise a list where one branch is a list (an alias's pool): each item's problems at its path.
  const lists = branches.filter((b) => b.type === 'array')
  if (lists.length === 1 && Array.isArray(e.value))
    return schemaProblems(lists[0]!, e.value, base + e.path, fromEnv)
  const path = at(base, e.path)
  const got = quote(e, fromEnv(path))(e.value)
  const literals = branches.every((b) => b.const !== undefined)
  const message = literals
    ? `must be one of ${branches.map((b) => String(b.const)).join(', ')} (got ${got})`
    : `must be ${branches.map(alternative).join(', or ')} (got ${got})`
  return [{ path, message }]
}

/** One branch of a union, in words. */
function alternative(s: TSchema): string {
  if (s.const !== undefined) return `'${s.const}'`
  if (s.type === 'integer' || s.type === 'number') {
    const what = s.type === 'integer' ? 'an integer' : 'a number'
    const max = s.maxWhy ? `${s.maximum} (${s.maxWhy})` : s.maximum
    if (s.minimum !== undefined && s.maximum !== undefined) return `${what} from ${s.minimum} to ${max}`
    if (s.minimum !== undefined) return `${what} of at least ${s.minimum}`
    if (s.exclusiveMinimum !== undefined) return `${what} greater than ${s.exclusiveMinimum}`
    if (s.maximum !== undefined) return `${what} of at most ${max}`
    return what
  }
  if (s.type === 'null') return 'null'
  if (s.type === 'object') return `a mapping { ${Object.keys(s.properties ?? {}).join(', ')} }`
  if (s.type === 'array') return s.minItems ? `a list of at least ${count(s.minItems, 'item')}` : 'a list'
  if (s.type === 'string') {
    if (s.patternWhy) return s.patternWhy
    if (s.pattern) return `a string matching '${s.pattern}'`
    if (s.minLength) return `a string of at least ${count(s.minLength, 'character')}`
    return 'a string'
  }
  if (s.type === 'boolean') return 'true or false'
  return `a ${s.type}`
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`

/**
 * How a problem shows what it got: as written, or only its kind and length when it may be a
 * secret: a setting declared `secret` (schema-units.ts `Secret`), a URL with a user or password
 * (`postgres://user:pass@…`), or a value from an environment variable (where secrets are kept).
 * The text goes to `config check`, serve's journal and the reload's 422 body.
 */
function quote(e: ValueError, fromEnv: boolean): (v: unknown) => string {
  return e.schema.secret || fromEnv || hasCredentials(e.value) ? concealed : shown
}

const hasCredentials = (v: unknown) => typeof v === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]*@/i.test(v)

/** A value that may be a secret, by kind only: a string by its length. */
function concealed(v: unknown): string {
  if (typeof v === 'string') return `a string of ${count(v.length, 'character')}`
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return `a ${typeof v}`
  return shown(v)
}

/** A value as the error quotes it: scalars as written, collections by kind. */
function shown(v: unknown): string {
  if (typeof v === 'string') return `'${v.length > 40 ? `${v.slice(0, 37)}...` : v}'`
  if (Array.isArray(v)) return v.length ? `a list of ${count(v.length, 'item')}` : 'an empty list'
  if (isMap(v)) return 'a mapping'
  return String(v)
}

/**
 * TypeBox stops a closed map at its first key outside the pattern and never checks that key's
 * value: name every such key, and check each value against the map's value schema.
 */
function mapKeyProblems(
  e: ValueError,
  root: unknown,
  base: string,
  fromEnv: (path: string) => boolean,
): SchemaProblem[] {
  const mapPath = e.path.slice(0, e.path.lastIndexOf('/'))
  const map = valueAt(root, mapPath) as Record<string, unknown>
  const [pattern, valueSchema] = Object.entries(e.schema.patternProperties as Record<string, TSchema>)[0]!
  const regex = new RegExp(pattern)
  const out: SchemaProblem[] = []
  for (const [key, v] of Object.entries(map)) {
    if (regex.test(key)) continue
    const path = `${base}${mapPath}/${step(key)}`
    out.push({
      path,
      message: `${e.schema.keyName} '${key}' is not allowed: ${e.schema.keyRule} (${pattern})`,
    })
    out.push(...schemaProblems(valueSchema, v, path, fromEnv))
  }
  return out
}

/**
 * The path of a problem TypeBox found at `path` inside the value at `base` (a union's branch is
 * checked on its own): the value itself when `path` is empty, not `base` with a trailing `/`.
 */
const at = (base: string, path: string) => base + path || '/'

/** The value at a JSON pointer TypeBox reported (every step of it exists: TypeBox walked it). */
function valueAt(root: unknown, pointer: string): unknown {
  let v = root
  for (const step of pointer.split('/').slice(1)) {
    v = (v as Record<string, unknown>)[step.replace(/~1/g, '/').replace(/~0/g, '~')]
  }
  return v
}
