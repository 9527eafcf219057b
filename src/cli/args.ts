/**
 * @module
 * A small argv parser: positionals plus `--flag value`, `--flag=value` and boolean flags.
 * Unknown flags are errors so a typo never silently does something else.
 */

export class UsageError extends Error {
  override name = 'UsageError'
}

export interface Parsed {
  positionals: string[]
  flags: Record<string, string | true>
}

/** `booleans` lists the flags that take no value. */
export function parseArgs(argv: string[], booleans: ReadonlySet<string>): Parsed {
  const positionals: string[] = []
  const flags: Record<string, string | true> = {}
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--') {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=')
      const name = eq > 0 ? a.slice(2, eq) : a.slice(2)
      if (booleans.has(name)) {
        flags[name] = true
        continue
      }
      const next = argv[i + 1]
      // A flag followed by another flag has no value; flagString() reports it if it needs one.
      if (eq > 0) flags[name] = a.slice(eq + 1)
      else if (next === undefined || next.startsWith('--')) flags[name] = true
      else flags[name] = argv[++i]!
    } else if (a === '-h') {
      flags.help = true
    } else {
      positionals.push(a)
    }
  }
  return { positionals, flags }
}

export function flagString(p: Parsed, name: string): string | undefined {
  const v = p.flags[name]
  if (v === true) throw new UsageError(`--${name} needs a value`)
  return v
}

export function flagInt(p: Parsed, name: string, min = 1, max = 1_000_000): number | undefined {
  const v = flagString(p, name)
  if (v === undefined) return undefined
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got '${v}'`)
  }
  return Number(v)
}

export function checkFlags(p: Parsed, allowed: readonly string[]): void {
  for (const f of Object.keys(p.flags)) {
    if (!allowed.includes(f)) throw new UsageError(`unknown flag --${f}`)
  }
}

export function need(p: Parsed, index: number, what: string, usage: string): string {
  const v = p.positionals[index]
  if (v === undefined) throw new UsageError(`missing ${what}. Usage: switchyard ${usage}`)
  return v
}
