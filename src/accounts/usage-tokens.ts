/**
 * @module
 * The token and money part of the `/v1/usage` document (DESIGN §11): tokens used in the rolling
 * minute and day — `used` what requests that ended settled to, `reserved` what requests still in
 * flight hold, `remaining` what is truly left (limit − used − reserved, as admission counts it) —
 * the budget that applies with what is spent (settled), reserved and left in its calendar period,
 * and cost in USD beside the token totals. Read from the limiter's rows without charging anything.
 *
 * `budget` is the one that binds for this key: of the account's (its plan's) and the key's own,
 * the one with less left, and `scope` says which. Without either it is null. A key with limits of
 * its own also gets what is left of each (`keyLimits`): its requests and tokens in the minute and
 * the day, and its budget, each null where the key sets none.
 */
import type { PlanConfig } from '../config/index.ts'
import { WINDOW_COUNTS } from '../config/limit-settings.ts'
import { windowView } from '../limits/index.ts'
import { microsToUsd } from '../limits/pricing.ts'
import {
  bindingState,
  type LimitRow,
  type LimitScope,
  type RowState,
  settledOf,
  usdToMicros,
  windowRows,
} from '../limits/rows.ts'
import type { KeyRecord, Store, UsageSummary, UsageTotals } from '../store/index.ts'
import { iso } from '../util/clock.ts'

/** The capacity asked for a measure nothing limits: the row is read for its `used` alone. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER

export interface BudgetView {
  usd: number
  period: 'day' | 'week' | 'month'
  /** Settled: what requests that ended cost. */
  spent_usd: number
  /** Held by requests still in flight (their highest cost, settled to what they use when they end). */
  reserved_usd: number
  /** usd − spent_usd − reserved_usd: what a new request may still be charged. */
  remaining_usd: number
  resets_at: string | null
  /** Whose budget this is: the account's plan's, or the key's own. */
  scope: LimitScope
}

/** The rows `/v1/usage` reads: the account's tokens (limited or not), every budget that applies, and the key's own windows. */
export function usageRows(plan: PlanConfig | null, key: KeyRecord | null): LimitRow[] {
  // The account's token windows, limited or not (config/limit-settings.ts: `tpm`, `tpd`).
  const rows: LimitRow[] = WINDOW_COUNTS.filter((s) => s.row.resource === 'tokens').map((s) => ({
    ...s.row,
    scope: 'account',
    capacity: plan?.[s.name] ?? UNBOUNDED,
  }))
  const budget = (scope: LimitScope, usd: number | null, period: BudgetView['period'] | null) => {
    if (usd !== null && period !== null) {
      rows.push({ resource: 'microdollars', window: 'period', period, scope, capacity: usdToMicros(usd) })
    }
  }
  budget('account', plan?.budget?.usd ?? null, plan?.budget?.period ?? null)
  const own = key?.limits
  if (own) rows.push(...windowRows(own, 'key'))
  if (own && own.budgetMicros !== null && own.budgetPeriod !== null) {
    rows.push({
      resource: 'microdollars',
      window: 'period',
      period: own.budgetPeriod,
      scope: 'key',
      capacity: own.budgetMicros,
    })
  }
  return rows
}

/** A token row's window view: `used` settled, `reserved` beside it, `remaining` what is truly left. */
function rowView(s: RowState, limit: number | null, now: number) {
  return {
    ...windowView(
      { limit, used: settledOf(s), remaining: limit === null ? null : s.remaining, resetAt: s.resetAt },
      now,
    ),
    reserved: s.reserved ?? 0,
  }
}

function tokenWindow(states: RowState[], window: 'minute' | 'day', now: number) {
  const account = states.find(
    (s) => s.row.resource === 'tokens' && s.row.window === window && s.row.scope === 'account',
  )
  const s: RowState = account ?? {
    row: { resource: 'tokens', window, scope: 'account', capacity: UNBOUNDED },
    used: 0,
    remaining: UNBOUNDED,
    resetAt: null,
  }
  return rowView(s, s.row.capacity !== UNBOUNDED ? s.row.capacity : null, now)
}

/** What is left of the key's own limits (null where it sets none). */
function keyLimitsLeft(states: RowState[], now: number) {
  const key = states.filter((x) => x.row.scope === 'key')
  const own = (resource: 'requests' | 'tokens', window: 'minute' | 'day') => {
    const s = bindingState(key, resource, window)
    if (!s) return null
    // A request window: its count (an admitted request holds nothing to settle there).
    return resource === 'requests'
      ? windowView({ limit: s.row.capacity, used: s.used, remaining: s.remaining, resetAt: s.resetAt }, now)
      : rowView(s, s.row.capacity, now)
  }
  return {
    minute: own('requests', 'minute'),
    day: own('requests', 'day'),
    tokens_minute: own('tokens', 'minute'),
    tokens_day: own('tokens', 'day'),
    budget: budgetView(key),
  }
}

export function budgetView(states: RowState[]): BudgetView | null {
  const s = bindingState(states, 'microdollars', 'period')
  if (!s) return null
  return {
    usd: microsToUsd(s.row.capacity),
    period: s.row.period!,
    spent_usd: microsToUsd(settledOf(s)),
    reserved_usd: microsToUsd(s.reserved ?? 0),
    remaining_usd: microsToUsd(s.remaining),
    resets_at: iso(s.resetAt),
    scope: s.row.scope,
  }
}

const withCost = (t: UsageTotals, micros: number | undefined) => ({
  ...t,
  cost_usd: microsToUsd(micros ?? 0),
})

/** Token totals with their cost in USD beside them: today, the last 24 h, and per model. */
export function costedSummary(summary: UsageSummary) {
  const cost = summary.cost_micros
  return {
    today: withCost(summary.today, cost?.today),
    last_24h: withCost(summary.last_24h, cost?.last_24h),
    by_model: Object.fromEntries(
      Object.entries(summary.by_model).map(([model, t]) => [model, withCost(t, cost?.by_model[model])]),
    ),
  }
}

/** Reads the rows and shapes them for the report. */
export async function tokenUsage(
  store: Pick<Store, 'rowStates'>,
  q: { accountId: number; key: KeyRecord | null; plan: PlanConfig | null; now: number },
) {
  const states = await store.rowStates({
    accountId: q.accountId,
    keyId: q.key?.id ?? null,
    now: q.now,
    rows: usageRows(q.plan, q.key),
  })
  return {
    tokensMinute: tokenWindow(states, 'minute', q.now),
    tokensDay: tokenWindow(states, 'day', q.now),
    budget: budgetView(states),
    keyLimits: keyLimitsLeft(states, q.now),
  }
}
