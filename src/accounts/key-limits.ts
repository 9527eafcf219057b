/**
 * @module
 * A key's own limits (DESIGN §11) as the command line, the admin API and the console set and show
 * them: `rpm`, `rpd`, `tpm`, `tpd`, `budget: {usd, period}` and `models` (what a plan's `models` takes: ids, `prefix/*`, `tier:NAME`, `*`), each
 * null when the key sets none (the account's plan alone applies).
 *
 * **Within the account's plan.** A key's limit narrows its account's; it never widens it. So a key
 * limit that could never apply is refused (400 naming the field) rather than silently ignored: a
 * key `rpm`, `rpd`, `tpm` or `tpd` above the plan's (where the plan sets one; equal is allowed); a
 * key budget above the plan's for a period no longer than the plan's (a $100/day key on a
 * $50/month plan could never spend it; a $30/month key on a $5/day plan can be reached and is
 * allowed); a `models` entry that reaches no model the plan allows, or names no model, alias or tier. A plan without a limit for a
 * measure takes any key limit for it.
 * This is checked when the limits are set, against the plan the account is on then. After a plan
 * change the tighter of the two still applies at admission (the limiter takes the row with less
 * left), so a key is never worth more than its account.
 *
 * @example
 * applyPatch(NO_LIMITS, { tpm: 5000, budget: { usd: 2, period: 'day' } })
 * // → { rpm: null, rpd: null, tpm: 5000, tpd: null, budgetMicros: 2000000, budgetPeriod: 'day', models: null }
 */
import { type Allows, reachable } from '../catalogue/reach.ts'
import { Catalogue, planAllows, type Routed } from '../catalogue/routing.ts'
import type { Config, PlanConfig } from '../config/index.ts'
import {
  BUDGET_PERIODS,
  KEY_COUNTS,
  KEY_LIMIT_FIELDS,
  type KeyCountName,
  keyCounts,
} from '../config/limit-settings.ts'
import { listEntryProblem, namesOf } from '../config/model-list.ts'
import { formatUsd, microsToUsd } from '../limits/pricing.ts'
import { type CalendarPeriod, usdToMicros } from '../limits/rows.ts'
import type { KeyLimits } from '../store/index.ts'
import { GatewayError, invalidValue } from '../util/errors.ts'
import { microUnits } from '../util/micro-units.ts'

export type { KeyLimits }

export const NO_LIMITS: Readonly<KeyLimits> = Object.freeze({
  ...keyCounts(() => null),
  budgetMicros: null,
  budgetPeriod: null,
  models: null,
})

/** What the API answers and the CLI prints: the key fields of config/limit-settings.ts. */
export type KeyLimitsView = { [N in KeyCountName]: number | null } & {
  budget: { usd: number; period: CalendarPeriod } | null
  models: string[] | null
}

/**
 * A change: a field absent is kept, null clears it, a value sets it. `budget.period` may be left
 * out when the key already has a budget (its period is kept).
 */
export type KeyLimitsPatch = { [N in KeyCountName]?: number | null } & {
  budget?: { usd?: number; period?: CalendarPeriod } | null
  models?: string[] | null
}

/** The largest count a limit takes (the store's integer columns, a day of a very busy key). */
export const MAX_COUNT = 1_000_000_000
/** The largest budget in USD (fits the micro-dollar counters with room to spare). */
export const MAX_BUDGET_USD = 1_000_000_000

export function keyLimitsView(l: KeyLimits | null | undefined): KeyLimitsView {
  const k = l ?? NO_LIMITS
  return {
    ...keyCounts((name) => k[name]),
    budget:
      k.budgetMicros === null || k.budgetPeriod === null
        ? null
        : { usd: microsToUsd(k.budgetMicros), period: k.budgetPeriod },
    models: k.models === null ? null : [...k.models],
  }
}

/** True when the key sets no limit of its own. */
export const noOwnLimits = (l: KeyLimits | null | undefined): boolean =>
  !l || Object.values(l).every((v) => v === null)

/**
 * `current` with `patch` applied; every value checked (400 naming `prefix` + the field).
 * Whether the result is within the plan is `checkWithinPlan`'s question.
 */
export function applyPatch(current: KeyLimits, patch: KeyLimitsPatch, prefix = ''): KeyLimits {
  // The patch comes from JSON as it was sent: a misspelt field must not be silently ignored.
  onlyFields(patch, KEY_LIMIT_FIELDS, prefix.replace(/\.$/, '') || 'body', prefix)
  if (patch.budget !== null && patch.budget !== undefined) {
    onlyFields(patch.budget, ['usd', 'period'], `${prefix}budget`, `${prefix}budget.`)
  }
  const next: KeyLimits = { ...current }
  for (const { name: f } of KEY_COUNTS) {
    const v = patch[f]
    if (v === undefined) continue
    if (v !== null && !(Number.isInteger(v) && v >= 1 && v <= MAX_COUNT)) {
      throw refused(
        v,
        'number',
        `${prefix}${f}`,
        `must be a whole number from 1 to ${MAX_COUNT}, or null for none`,
      )
    }
    next[f] = v
  }
  if (patch.budget === null) {
    next.budgetMicros = null
    next.budgetPeriod = null
  } else if (patch.budget !== undefined) {
    // Either member left out keeps the key's current one (merge semantics, as for the fields).
    const { usd, period } = patch.budget
    if (usd === undefined && current.budgetMicros === null)
      throw invalidValue(`${prefix}budget.usd`, 'is required: the key has no budget yet')
    if (
      usd !== undefined &&
      (typeof usd !== 'number' || !(usd > 0) || usd > MAX_BUDGET_USD || microUnits(usd) === null)
    ) {
      throw refused(
        usd,
        'number',
        `${prefix}budget.usd`,
        `must be more than 0 and at most ${MAX_BUDGET_USD} USD, with at most 6 decimals`,
      )
    }
    const p = period ?? current.budgetPeriod
    if (p === null)
      throw invalidValue(`${prefix}budget.period`, `is required: one of ${BUDGET_PERIODS.join(', ')}`)
    if (!(BUDGET_PERIODS as readonly string[]).includes(p)) {
      throw refused(
        p,
        'string',
        `${prefix}budget.period`,
        `'${p}' is not one of ${BUDGET_PERIODS.join(', ')}`,
      )
    }
    next.budgetMicros = usd === undefined ? current.budgetMicros : usdToMicros(usd)
    next.budgetPeriod = p
  }
  if (patch.models !== undefined) {
    const m = patch.models
    if (m !== null) {
      if (!Array.isArray(m) || m.length === 0 || m.some((id) => typeof id !== 'string' || id === '')) {
        // Of the wrong kind: the list itself, or an id in it that is not a string.
        const odd = Array.isArray(m) ? m.find((id) => typeof id !== 'string') : m
        throw refused(
          odd ?? '',
          Array.isArray(m) ? 'string' : 'array',
          `${prefix}models`,
          'must be a non-empty list of model ids, or null for every model of the plan',
        )
      }
      next.models = [...new Set(m)]
    } else next.models = null
  }
  return next
}

/**
 * Refuses a change that names no limit (`{}`): it would change nothing, and say so with a 200.
 * 400 naming the body, as `keys set-limits` without a flag is a usage error.
 */
export function requireChange(patch: KeyLimitsPatch, prefix = ''): void {
  const name = prefix.replace(/\.$/, '') || 'body'
  onlyFields(patch, KEY_LIMIT_FIELDS, name, prefix)
  if (Object.keys(patch).length === 0) {
    throw invalidValue(
      name,
      `nothing to change: give at least one of ${KEY_LIMIT_FIELDS.join(', ')} (null clears one)`,
    )
  }
}

function onlyFields(v: unknown, fields: readonly string[], name: string, prefix: string): void {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw refused(v, 'object', name, `must be an object with any of ${fields.join(', ')}`)
  }
  for (const k of Object.keys(v)) {
    if (!fields.includes(k))
      throw invalidValue(`${prefix}${k}`, `unknown field; a key's limits are ${fields.join(', ')}`)
  }
}

/**
 * 400 naming `param`: `invalid_type` when `v` is not of the JSON kind the field takes (`"rpm": "5"`,
 * as the routes' schemas answer `"days": "30"`), else `invalid_value` (of the kind, out of range).
 */
function refused(v: unknown, kind: 'number' | 'string' | 'object' | 'array', param: string, message: string) {
  const got = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v
  if (got === kind) return invalidValue(param, message)
  const said = got === 'null' ? 'null' : `${/^[ao]/.test(got) ? 'an' : 'a'} ${got}`
  return new GatewayError(400, 'invalid_type', `${param}: ${message}; got ${said}`, { param })
}

const PERIOD_LENGTH: Record<CalendarPeriod, number> = { day: 1, week: 2, month: 3 }

/** Refuses (400 naming the field) a key limit its account's plan makes meaningless; see the module doc. */
export function checkWithinPlan(
  limits: KeyLimits,
  planName: string,
  plan: PlanConfig | null,
  config: Pick<Config, 'providers'> & Partial<Pick<Config, 'aliases'>>,
  prefix = '',
): void {
  if (!plan) return
  for (const { name: f } of KEY_COUNTS) {
    const own = limits[f]
    const cap = plan[f] ?? null
    if (own !== null && cap !== null && own > cap) {
      throw invalidValue(
        `${prefix}${f}`,
        `${own} is above the account's plan '${planName}' (${f} ${cap}); a key's limits are within its account's`,
      )
    }
  }
  const budget = plan.budget
  if (limits.budgetMicros !== null && limits.budgetPeriod !== null && budget) {
    const cap = usdToMicros(budget.usd)
    if (PERIOD_LENGTH[limits.budgetPeriod] <= PERIOD_LENGTH[budget.period] && limits.budgetMicros > cap) {
      throw invalidValue(
        `${prefix}budget.usd`,
        `${formatUsd(limits.budgetMicros)} a ${limits.budgetPeriod} is above the account's plan '${planName}' (${formatUsd(cap)} a ${budget.period}); a key's budget is within its account's`,
      )
    }
  }
  if (limits.models) {
    const names = namesOf({ providers: config.providers, aliases: config.aliases ?? [] })
    const catalogue = new Catalogue(config.providers, config.aliases ?? [])
    // Everything a request can name: each model, and each exact alias (a pattern is its targets).
    const named: Routed[] = [
      ...catalogue.list().map((e) => ({ named: e.id, alias: null, members: [e] })),
      ...catalogue.aliases
        .exact()
        .map((a) => ({ named: a.id, alias: a, members: a.pool.members.map((m) => m.entry) })),
    ]
    const byPlan: Allows = (id, tier) => planAllows(plan.models, id, { tier })
    for (const entry of limits.models) {
      // The forms a plan's list takes (DESIGN §13: keys allow an alias by its id, `team/*` …).
      const problem = listEntryProblem(names, entry)
      if (problem)
        throw invalidValue(`${prefix}models`, `${problem}; see GET /v1/models or switchyard models`)
      const byEntry: Allows = (id, tier) => planAllows([entry], id, { tier })
      if (!named.some((r) => overlap(reachable(r, byEntry), reachable(r, byPlan))))
        throw invalidValue(`${prefix}models`, `'${entry}' is not in the account's plan '${planName}'`)
    }
  }
}

const overlap = <T>(a: readonly T[], b: readonly T[]) => a.some((x) => b.includes(x))
