/**
 * @module
 * A small argv parser: positionals plus `--flag value`, `--flag=value` and boolean flags.
 * Unknown flags and positionals a command does not take are errors, so a typo never silently
 * does something else: every flag is a long one (`-h` alone is short for `--help`).
 */

import { parseIsoTime } from '../util/clock.ts'
import { printable, quoted } from './text.ts'

export class UsageError extends Error {
  override name = 'UsageError'
}

export interface Parsed {
  positionals: string[]
  flags: Record<string, string | true>
  /** Single-dash words such as `-p`: no command takes one; `checkFlags` refuses them. */
  shortFlags: string[]
}

/** `-p`, `-n`, `-abc`; not `-` alone, nor a negative number (`-5`, `-.5`), which are words. */
const SHORT_FLAG = /^-[^-\d.]/

/** `booleans` lists the flags that take no value. */
export function parseArgs(argv: string[], booleans: ReadonlySet<string>): Parsed {
  const positionals: string[] = []
  const flags: Record<string, string | true> = {}
  const shortFlags: string[] = []
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
        // `--json=false` must not mean --json: a boolean flag is there or not.
        if (eq > 0) throw new UsageError(`--${printable(name)} takes no value; give it alone or leave it out`)
        flags[name] = true
        continue
      }
      const next = argv[i + 1]
      // A flag followed by another flag has no value; flagString() reports it if it needs one.
      // Anything else is its value, a negative number too (`--days -1` is then out of range).
      if (eq > 0) flags[name] = a.slice(eq + 1)
      else if (next === undefined || next.startsWith('--')) flags[name] = true
      else flags[name] = argv[++i]!
    } else if (a === '-h') {
      flags.help = true
    } else if (SHORT_FLAG.test(a)) {
      shortFlags.push(a)
    } else {
      positionals.push(a)
    }
  }
  return { positionals, flags, shortFlags }
}

export function flagString(p: Parsed, name: string): string | undefined {
  const v = p.flags[name]
  // An empty value (`--db ''`, `--host=`) is never meant as the config's or the default one.
  if (v === true || v === '') throw new UsageError(`--${name} needs a value`)
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

/**
 * An ISO-8601 date or time (`2030-01-31`, `2030-01-31T00:00:00Z`, with an offset) → epoch ms.
 * `Date.parse` alone rolls an impossible day over (2030-02-31 → 2030-03-03): the date written
 * must be a day of the calendar.
 */
export function flagTime(p: Parsed, name: string): number | undefined {
  const v = flagString(p, name)
  if (v === undefined) return undefined
  const ms = parseIsoTime(v)
  if (ms !== null) return ms
  throw new UsageError(
    `--${name} must be an ISO-8601 date or time that exists, such as 2030-01-31 or 2030-01-31T00:00:00Z; got ${quoted(v)}`,
  )
}

/** Flags a command takes without saying so in its help: never suggested for a short flag. */
const INTERNAL_FLAGS = new Set(['worker-child', 'worker-port'])

/** `allowed`: every flag the command takes, the global ones included. */
export function checkFlags(p: Parsed, allowed: readonly string[]): void {
  for (const s of p.shortFlags) {
    const like = allowed
      .filter((f) => !INTERNAL_FLAGS.has(f) && f[0] === s[1]!.toLowerCase())
      .sort()
      .map((f) => `--${f}`)
    const hint = like.length ? `; did you mean ${like.join(' or ')}?` : '; flags are long ones (see --help)'
    throw new UsageError(`unknown flag ${printable(s)}${hint}`)
  }
  for (const f of Object.keys(p.flags)) {
    if (!allowed.includes(f)) throw new UsageError(`unknown flag --${printable(f)}`)
  }
}

/** Refuses positionals past the first `count` (the command's own words included). */
export function checkPositionals(p: Parsed, count: number, usage: string): void {
  const extra = p.positionals.slice(count)
  if (!extra.length) return
  const plural = extra.length > 1 ? 's' : ''
  throw new UsageError(
    `unexpected argument${plural} ${extra.map((a) => quoted(a)).join(' ')}. Usage: switchyard ${usage}`,
  )
}

export function need(p: Parsed, index: number, what: string, usage: string): string {
  const v = p.positionals[index]
  if (v === undefined) throw new UsageError(`missing ${what}. Usage: switchyard ${usage}`)
  return v
}
