/**
 * @module
 * `${VAR}` and `${VAR:-default}` interpolation inside YAML string values. Runs on the parsed
 * document (not the raw text) so a value can never inject YAML structure. `$${` writes a literal
 * `${`; any other `${` that does not start a well-formed placeholder is an error, never text kept
 * as written (a typo must not silently change behaviour: `${TOKEN:secret}` for `${TOKEN:-secret}`
 * would have made the default the value for good).
 *
 * @example
 * interpolate({ port: '${PORT:-8080}' }, {}, problems) // { port: 8080 }
 * interpolate({ a: '$${X}' }, {}, problems)            // { a: '${X}' }
 */

/** Left to right, one of: the escape `$${`, a placeholder, or a `${` that starts neither. */
const TOKEN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-((?:[^}$]|\$(?!\{))*))?\}|\$\{/g

const WHOLE = /^\$\{[^}]+\}$/

const FORM =
  'write ${NAME} or ${NAME:-default} (NAME: letters, digits and _, not starting with a digit; a default holds no } or ${), or $${ for a literal ${'

function coerce(text: string): unknown {
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text)
  if (text === 'true' || text === 'false') return text === 'true'
  return text
}

export interface InterpolationProblem {
  path: string
  message: string
  /** A variable that is not set (rather than a placeholder written wrong). */
  unset: boolean
}

/** Returns a copy of `value` with every string interpolated; problems name the path and variable. */
export function interpolate(
  value: unknown,
  env: Record<string, string | undefined>,
  problems: InterpolationProblem[],
  path = '',
): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value
    const out = value.replace(
      TOKEN,
      (m, name: string | undefined, fallback: string | undefined, offset: number) => {
        if (m === '$${') return '${'
        if (name === undefined) {
          problems.push({
            path: path || '/',
            message: `'${excerpt(value, offset)}' is not a placeholder: ${FORM}`,
            unset: false,
          })
          return m
        }
        const v = env[name]
        if (v !== undefined) return v
        if (fallback !== undefined) return fallback
        problems.push({
          path: path || '/',
          message: `environment variable ${name} is not set (set it, or write \${${name}:-default})`,
          unset: true,
        })
        return ''
      },
    )
    // A value that is one placeholder alone (`port: ${PORT}`) takes the type its text spells.
    return WHOLE.test(value) ? coerce(out) : out
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, problems, `${path}/${i}`))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, env, problems, `${path}/${k}`)
    return out
  }
  return value
}

/** The malformed placeholder as written: up to its `}` (or the end), at most 40 characters. */
function excerpt(text: string, at: number): string {
  const close = text.indexOf('}', at)
  const end = close < 0 ? text.length : close + 1
  return end - at > 40 ? `${text.slice(at, at + 37)}...` : text.slice(at, end)
}
