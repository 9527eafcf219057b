/**
 * @module
 * `${VAR}` and `${VAR:-default}` interpolation inside YAML string values. Runs on the parsed
 * document (not the raw text) so a value can never inject YAML structure.
 */

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

const WHOLE = /^\$\{[^}]+\}$/

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
    const out = value.replace(PATTERN, (_m, name: string, fallback: string | undefined) => {
      const v = env[name]
      if (v !== undefined) return v
      if (fallback !== undefined) return fallback
      problems.push({
        path: path || '/',
        message: `environment variable ${name} is not set (set it, or write \${${name}:-default})`,
        unset: true,
      })
      return ''
    })
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
