/**
 * @module
 * A small argv parser: positionals plus `--flag value`, `--flag=value` and boolean flags.
 * Unknown flags are errors so a typo never silently does something else.
 */

import { quoted } from './text.ts'

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

const ISO_DATE = /^(\d{4})-(\d\d)-(\d\d)(?=$|[T ])/

/**
 * An ISO-8601 date or time (`2030-01-31`, `2030-01-31T00:00:00Z`, with an offset) → epoch ms.
 * `Date.parse` alone rolls an impossible day over (2030-02-31 → 2030-03-03): the date written
 * must be a day of the calendar.
 */
export function flagTime(p: Parsed, name: string): number | undefined {
  const v = flagString(p, name)
  if (v === undefined) return undefined
  const m = ISO_DATE.exec(v)
  const ms = Date.parse(v)
  if (m && !Number.isNaN(ms)) {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
    const day = new Date(0)
    day.setUTCFullYear(y, mo - 1, d)
    if (day.getUTCMonth() === mo - 1 && day.getUTCDate() === d) return ms
  }
  throw new UsageError(
    `--${name} must be an ISO-8601 date or time that exists, such as 2030-01-31 or 2030-01-31T00:00:00Z; got ${quoted(v)}`,
  )
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
