/**
 * @module
 * The flags of a key's own limits on `keys create` and `keys set-limits` — one per setting a key
 * may set (config/limit-settings.ts): `--rpm --rpd --tpm --tpd --budget-usd --budget-period
 * --models` — → a change to a key's limits. `none` clears a limit (`--tpm none`,
 * `--budget-usd none`, `--models none`); a flag left out keeps what the key has.
 */
import type { KeyLimitsPatch, KeyLimitsView } from '../accounts/key-limits.ts'
import { BUDGET_PERIODS, cliFlags, KEY_COUNTS, LIMIT_SETTINGS } from '../config/limit-settings.ts'
import { formatUsd } from '../limits/pricing.ts'
import { type CalendarPeriod, usdToMicros } from '../limits/rows.ts'
import { flagString, type Parsed, UsageError } from './args.ts'

export const LIMIT_FLAGS: readonly string[] = LIMIT_SETTINGS.filter((s) => s.key).flatMap(cliFlags)

/**
 * The flags' lines of `keys --help`: the counts two to a line, then the budget's and the models'.
 * @example
 * //   --rpm N               requests per minute       --rpd N   requests per day (24 h)
 */
export function limitFlagsHelp(): string {
  const flag = (s: string) => `  ${s.padEnd(22)}`
  const lines: string[] = []
  for (let i = 0; i < KEY_COUNTS.length; i += 2) {
    const a = KEY_COUNTS[i]!
    const b = KEY_COUNTS[i + 1]
    lines.push(
      b
        ? `${flag(`--${a.name} N`)}${a.help.padEnd(26)}${`--${b.name} N`.padEnd(10)}${b.help}`
        : `${flag(`--${a.name} N`)}${a.help}`,
    )
  }
  for (const s of LIMIT_SETTINGS) {
    if (!s.key || s.kind === 'count') continue
    if (s.kind === 'budget') {
      const [usd, period] = cliFlags(s)
      lines.push(
        `${flag(`--${usd} X`)}USD per --${period}, at most 6 decimals (e.g. 5 or 0.50; kept if left out on set-limits)`,
        `${flag(`--${period} P`)}day, week or month (UTC calendar periods; kept if left out on set-limits)`,
      )
    } else
      lines.push(
        `${flag(`--${s.name} ID,...`)}the only models the key may use, as a plan lists them: ids from 'switchyard models', prefix/*, tier:NAME, *`,
      )
  }
  return lines.join('\n')
}

const COUNT = /^[1-9]\d{0,9}$/
const USD = /^(\d+(\.\d{1,6})?|\.\d{1,6})$/

export function limitsFromFlags(p: Parsed): KeyLimitsPatch {
  const patch: KeyLimitsPatch = {}
  for (const { name: f } of KEY_COUNTS) {
    const v = flagString(p, f)
    if (v === undefined) continue
    if (v === 'none') patch[f] = null
    else if (COUNT.test(v)) patch[f] = Number(v)
    else
      throw new UsageError(`--${f} must be a whole number of at least 1, or 'none' to clear it; got '${v}'`)
  }
  const usd = flagString(p, 'budget-usd')
  const period = flagString(p, 'budget-period')
  if (usd === 'none') {
    if (period !== undefined)
      throw new UsageError('--budget-usd none clears the budget; leave out --budget-period')
    patch.budget = null
  } else if (usd !== undefined || period !== undefined) {
    if (usd !== undefined && (!USD.test(usd) || Number(usd) <= 0)) {
      throw new UsageError(
        `--budget-usd must be an amount in USD above 0 with at most 6 decimals (e.g. 25 or 0.50), or 'none'; got '${usd}'`,
      )
    }
    if (period !== undefined && !(BUDGET_PERIODS as readonly string[]).includes(period)) {
      throw new UsageError(`--budget-period must be day, week or month; got '${period}'`)
    }
    // Either one alone keeps the key's other (a key without a budget needs both: refused by name).
    patch.budget = {
      ...(usd !== undefined ? { usd: Number(usd) } : {}),
      ...(period ? { period: period as CalendarPeriod } : {}),
    }
  }
  const models = flagString(p, 'models')
  if (models === 'none') patch.models = null
  else if (models !== undefined) {
    const ids = models
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
    if (!ids.length)
      throw new UsageError(
        "--models needs model ids (or prefix/*, tier:NAME, *) separated by commas, or 'none'",
      )
    patch.models = ids
  }
  return patch
}

/** One line: `tpm 5000, budget $2.00/day, models demo/echo`, or `none (the plan's apply)`. */
export function limitsText(l: KeyLimitsView): string {
  const parts: string[] = []
  for (const { name: f } of KEY_COUNTS) if (l[f] !== null) parts.push(`${f} ${l[f]}`)
  if (l.budget) parts.push(`budget ${formatUsd(usdToMicros(l.budget.usd))}/${l.budget.period}`)
  if (l.models) parts.push(`models ${l.models.join(',')}`)
  return parts.length ? parts.join(', ') : "none (the plan's apply)"
}
