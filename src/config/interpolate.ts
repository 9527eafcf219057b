/**
 * @module
 * `${VAR}` and `${VAR:-default}` interpolation inside YAML string values. Runs on the parsed
 * document (not the raw text) so a value can never inject YAML structure. `$${` writes a literal
 * `${`; any other `${` that does not start a well-formed placeholder is an error, never text kept
 * as written (a typo must not silently change behaviour: `${TOKEN:secret}` for `${TOKEN:-secret}`
 * would have made the default the value for good).
 *
 *
 * A value that is one placeholder alone takes the type its text spells (`port: ${PORT}` → 8080)
 * only where the schema does not take a string there: an all-digit API key stays a string.
 *
 * @example
 * interpolate({ server: { port: '${PORT:-8080}' } }, {}, ConfigSchema).value // { server: { port: 8080 } }
 * interpolate({ admin: { token: '$${X}' } }, {}, ConfigSchema).value        // { admin: { token: '${X}' } }
 */
import type { TSchema } from '@sinclair/typebox'
import { step } from './intact.ts'

/** Left to right, one of: the escape `$${`, a placeholder, or a `${` that starts neither. */
const TOKEN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-((?:[^}$]|\$(?!\{))*))?\}|\$\{/g

const WHOLE = /^\$\{[^}]+\}$/

const FORM =
  'write ${NAME} or ${NAME:-default} (NAME: letters, digits and _, not starting with a digit; a default holds no } or ${), or $${ for a literal ${'

/** The value YAML would read from `text` written bare: a number, a boolean, null, or the text. */
function coerce(text: string): unknown {
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text)
  if (text === 'true' || text === 'false') return text === 'true'
  if (text === 'null') return null
  return text
}

export interface InterpolationProblem {
  path: string
  message: string
  /** A variable that is not set (rather than a placeholder written wrong). */
  unset: boolean
}

export interface Interpolated {
  value: unknown
  problems: InterpolationProblem[]
  /** Path → the environment variables (set ones; not defaults) its value was made from. */
  sources: Map<string, string[]>
}

/** Returns a copy of `doc` with every string value interpolated; problems name the path and variable. */
export function interpolate(
  doc: unknown,
  env: Record<string, string | undefined>,
  schema?: TSchema,
): Interpolated {
  const out: Interpolated = { value: undefined, problems: [], sources: new Map() }
  out.value = walk(doc, schema ? [schema] : [], '', { env, out })
  return out
}

/** One interpolation: the variables read, and where the result and its problems go. */
interface Run {
  env: Record<string, string | undefined>
  out: Interpolated
}

function walk(value: unknown, schemas: TSchema[], path: string, run: Run): unknown {
  if (typeof value === 'string') return value.includes('${') ? string(value, schemas, path, run) : value
  if (Array.isArray(value))
    return value.map((v, i) => walk(v, below(schemas, String(i)), `${path}/${i}`, run))
  if (value && typeof value === 'object') {
    const copy: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value))
      copy[k] = walk(v, below(schemas, k), `${path}/${step(k)}`, run)
    return copy
  }
  return value
}

function string(value: string, schemas: TSchema[], path: string, run: Run): unknown {
  const { env, out } = run
  const at = path || '/'
  const used: string[] = []
  const text = value.replace(
    TOKEN,
    (m, name: string | undefined, fallback: string | undefined, offset: number) => {
      if (m === '$${') return '${'
      if (name === undefined) {
        out.problems.push({
          path: at,
          message: `'${excerpt(value, offset)}' is not a placeholder: ${FORM}`,
          unset: false,
        })
        return m
      }
      const v = env[name]
      if (v !== undefined) {
        used.push(name)
        return v
      }
      if (fallback !== undefined) return fallback
      out.problems.push({
        path: at,
        message: `environment variable ${name} is not set (set it, or write \${${name}:-default})`,
        unset: true,
      })
      return ''
    },
  )
  if (used.length) out.sources.set(at, [...new Set(used)])
  return WHOLE.test(value) && !takesString(schemas) ? coerce(text) : text
}

/**
 * The malformed placeholder as written, up to its `}` (or the end) — but nothing after a `:`,
 * which may be a default meant to stay secret (`${TOKEN:secret}`), and at most 40 characters.
 */
function excerpt(text: string, at: number): string {
  const close = text.indexOf('}', at)
  let shown = text.slice(at, close < 0 ? text.length : close + 1)
  const colon = shown.indexOf(':')
  if (colon >= 0) shown = `${shown.slice(0, colon + 1)}...${close < 0 ? '' : '}'}`
  return shown.length > 40 ? `${shown.slice(0, 37)}...` : shown
}

/** A union's branches in place of the union. */
const branches = (schemas: TSchema[]): TSchema[] =>
  schemas.flatMap((s) => (Array.isArray(s.anyOf) ? branches(s.anyOf) : [s]))

/** The schemas a value under `key` may have, for a value that may have any of `schemas`. */
function below(schemas: TSchema[], key: string): TSchema[] {
  return branches(schemas).flatMap((s): TSchema[] => {
    if (s.type === 'array') return s.items ? [s.items] : []
    if (s.type !== 'object') return []
    if (s.properties?.[key]) return [s.properties[key]]
    return Object.entries((s.patternProperties ?? {}) as Record<string, TSchema>)
      .filter(([pattern]) => new RegExp(pattern).test(key))
      .map(([, v]) => v)
  })
}

/** Whether a string is one of the values the setting takes (or nothing says what it takes). */
const takesString = (schemas: TSchema[]) =>
  schemas.length === 0 || branches(schemas).some((s) => s.type === 'string')
