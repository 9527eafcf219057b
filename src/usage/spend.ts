/**
 * @module
 * Money for the console's overview and keys page (DESIGN §15): what was spent today and this
 * month (UTC), in all, per account and per key, each beside the budget it is burning (the
 * account's plan's, the key's own) and what that budget's period has spent so far, and the
 * prompt cache's tokens (read and written) in the same day and month. Every figure is
 * the settled cost the usage rollups recorded (the request log's cost, summed per UTC day): the
 * same ledger `/admin/v1/usage/series` reports; money still reserved by requests in flight is not
 * in it. Two bounded store reads (daily buckets from the earliest period start, grouped by
 * account and by key); at most MAX_ACCOUNTS accounts and MAX_KEYS keys, the biggest spenders of
 * the month first. An account's budget is its current plan's (an expired plan's downgrade is
 * applied when the account is next used, not by this read).
 *
 * @example
 * const s = await spendOverview(deps, { account: 'acme' }, Date.now())
 * // { today_usd, month_usd, accounts: [{ account, today_usd, month_usd, budget }], keys: [...] }
 */
import type { AccountService } from '../accounts/service.ts'
import { microsToUsd } from '../limits/pricing.ts'
import { type Budget, type CalendarPeriod, periodBounds } from '../limits/rows.ts'
import type { Store, UsageSeries } from '../store/index.ts'
import { DAY_MS, iso } from '../util/clock.ts'

/** Keys listed at most (their records are read one by one). */
export const MAX_KEYS = 200
/** Accounts listed at most: the month's biggest spenders, then budgets not yet touched. */
export const MAX_ACCOUNTS = 200

export interface SpendDeps {
  store: Store
  accounts: Pick<AccountService, 'getAccount'>
  config: { plans: Record<string, { budget?: Budget | null | undefined }> }
}

/** A UTC day's settled micro-dollars and its prompt-cache tokens (read, written). */
interface Day {
  micros: number
  cached: number
  written: number
}
/** Per UTC day start, the days that cost or touched a prompt cache. */
type Days = Map<number, Day>

function byDay(series: UsageSeries[]): Map<string, Days> {
  const out = new Map<string, Days>()
  for (const s of series) {
    const days: Days = new Map()
    for (const p of s.points) {
      if (!p.cost_micros && !p.cached_tokens && !p.cache_write_tokens) continue
      const d = days.get(p.t) ?? { micros: 0, cached: 0, written: 0 }
      d.micros += p.cost_micros
      d.cached += p.cached_tokens
      d.written += p.cache_write_tokens
      days.set(p.t, d)
    }
    out.set(s.group, days)
  }
  return out
}

const since = (days: Days | undefined, from: number, of: keyof Day = 'micros') => {
  let n = 0
  for (const [t, d] of days ?? []) if (t >= from) n += d[of]
  return n
}

/** A budget beside what its current period spent (settled), or null without one. */
function burn(budget: Budget | null, days: Days | undefined, now: number) {
  if (!budget) return null
  const { start, resetsAt } = periodBounds(budget.period, now)
  const spent = since(days, start)
  const spentUsd = microsToUsd(spent)
  return {
    usd: budget.usd,
    period: budget.period,
    spent_usd: spentUsd,
    /** Spent ÷ budget, 0–1 and beyond (an overrun shows as more than 1). */
    used: budget.usd > 0 ? Math.round((spentUsd / budget.usd) * 1000) / 1000 : null,
    resets_at: iso(resetsAt),
  }
}

export async function spendOverview(deps: SpendDeps, q: { account?: string }, now: number) {
  // An unknown account is a 404 naming it (the account service's); none or empty: every account.
  const accountId = q.account ? (await deps.accounts.getAccount(q.account)).id : undefined
  const today = now - (now % DAY_MS)
  const month = periodBounds('month', now).start
  // The earliest start of any period a budget can have (a week may begin in the month before).
  const from = Math.min(month, periodBounds('week', now).start)
  const read = (groupBy: 'account' | 'key') =>
    deps.store.usageSeries({
      bucket: 'day',
      from,
      to: today + DAY_MS,
      groupBy,
      ...(accountId === undefined ? {} : { accountId }),
    })
  const [perAccount, perKey, accounts] = await Promise.all([
    read('account').then(byDay),
    read('key').then(byDay),
    deps.store.listAccounts(),
  ])
  const usd = (days: Days | undefined) => ({
    today_usd: microsToUsd(since(days, today)),
    month_usd: microsToUsd(since(days, month)),
    // Of the prompt tokens: read from and written to the providers' prompt caches (DESIGN §14).
    today_cached_tokens: since(days, today, 'cached'),
    today_cache_write_tokens: since(days, today, 'written'),
    month_cached_tokens: since(days, month, 'cached'),
    month_cache_write_tokens: since(days, month, 'written'),
  })
  let todayMicros = 0
  let monthMicros = 0
  for (const days of perAccount.values()) {
    todayMicros += since(days, today)
    monthMicros += since(days, month)
  }
  const accountRows = accounts
    .filter((a) => (accountId === undefined ? true : a.id === accountId))
    .map((a) => {
      const days = perAccount.get(String(a.id))
      const budget = deps.config.plans[a.plan]?.budget ?? null
      return { account: a.name, plan: a.plan, ...usd(days), budget: burn(budget, days, now) }
    })
    // Accounts that spent or have a budget to burn; the biggest spenders first.
    .filter((a) => a.month_usd > 0 || a.budget !== null)
    .sort((a, b) => b.month_usd - a.month_usd || a.account.localeCompare(b.account))
  const accountsShown = accountRows.slice(0, MAX_ACCOUNTS)
  const spenders = [...perKey]
    .map(([id, days]) => ({ id, days, month: since(days, month) }))
    .filter((k) => k.month > 0)
    .sort((a, b) => b.month - a.month || a.id.localeCompare(b.id))
  const records = await Promise.all(spenders.slice(0, MAX_KEYS).map((k) => deps.store.getKey(k.id)))
  const keyRows = spenders.slice(0, MAX_KEYS).map((k, i) => {
    const rec = records[i]
    const l = rec?.limits
    const budget =
      l?.budgetMicros != null && l.budgetPeriod
        ? { usd: microsToUsd(l.budgetMicros), period: l.budgetPeriod as CalendarPeriod }
        : null
    return {
      key_id: k.id,
      key_name: rec?.name ?? null,
      account: rec?.accountName ?? null,
      ...usd(k.days),
      budget: burn(budget, k.days, now),
    }
  })
  return {
    object: 'console.spend' as const,
    day: iso(today),
    month: iso(month),
    today_usd: microsToUsd(todayMicros),
    month_usd: microsToUsd(monthMicros),
    accounts: accountsShown,
    /** More accounts spent or have a budget than listed. */
    accounts_complete: accountRows.length <= MAX_ACCOUNTS,
    keys: keyRows,
    /** More keys spent this month than listed. */
    keys_complete: spenders.length <= MAX_KEYS,
  }
}
