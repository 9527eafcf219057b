/**
 * @module
 * `budget.threshold` and `tokens.threshold` (DESIGN §15): after a batch of outcomes is in the
 * store (the usage flush, off the request path), the accounts and keys it charged are read back
 * — what each budget row has spent this calendar period, what each `tpd` row holds in its rolling
 * day — and every threshold crossed (50, 80, 100 %) is queued once per period: the mark of
 * (scope, row, period start, threshold) is written with the deliveries, so other processes,
 * replicas and restarts never send it twice. `tpd` is a rolling window with no period of its own:
 * its "period" is the UTC day the threshold was crossed in.
 */

import { planState } from '../accounts/plans.ts'
import type { Config } from '../config/index.ts'
import { type LimitRow, periodBounds, type RowState, usdToMicros } from '../limits/rows.ts'
import type { Completion, KeyLimits, Store } from '../store/index.ts'
import type { Logger } from '../util/log.ts'
import type { Alerts } from './alerts.ts'

export const THRESHOLDS = [50, 80, 100] as const
/** The longest a `tokens.threshold` may come after its crossing: a `tpd` row is read this often at most. */
export const TOKENS_EVERY_MS = 30_000

const DAY_MS = 86_400_000

function accountRows(plan: {
  budget?: { usd: number; period: 'day' | 'week' | 'month' }
  tpd?: number | null
}): LimitRow[] {
  const rows: LimitRow[] = []
  if (plan.budget)
    rows.push({
      resource: 'microdollars',
      window: 'period',
      period: plan.budget.period,
      scope: 'account',
      capacity: usdToMicros(plan.budget.usd),
    })
  if (plan.tpd != null) rows.push({ resource: 'tokens', window: 'day', scope: 'account', capacity: plan.tpd })
  return rows
}

function keyRows(l: KeyLimits | null): LimitRow[] {
  const rows: LimitRow[] = []
  if (!l) return rows
  if (l.budgetMicros !== null && l.budgetPeriod)
    rows.push({
      resource: 'microdollars',
      window: 'period',
      period: l.budgetPeriod,
      scope: 'key',
      capacity: l.budgetMicros,
    })
  if (l.tpd !== null) rows.push({ resource: 'tokens', window: 'day', scope: 'key', capacity: l.tpd })
  return rows
}

export class ThresholdWatch {
  /** (account, key) pairs charged since the running check took its own: checked after it. */
  private pending = new Map<string, { accountId: number; keyId: string }>()
  private running: Promise<void> | null = null
  /** When each (account, key)'s `tpd` rows were last read (epoch ms). */
  private readonly tokensReadAt = new Map<string, number>()

  constructor(
    private readonly deps: { store: Store; config: Config; log: Logger },
    private readonly alerts: Alerts,
  ) {}

  /** Whether a webhook takes either event: else the usage flush never calls `written`. */
  get active(): boolean {
    return this.alerts.wants('budget.threshold') || this.alerts.wants('tokens.threshold')
  }

  /**
   * The usage flush wrote `batch`: checks the accounts and keys it charged (never throws). One
   * check runs at a time; pairs charged meanwhile wait for it and are checked once each after it,
   * so flushes faster than the checks never pile reads onto the store.
   */
  written(batch: Completion[], now: () => number): Promise<void> {
    for (const c of batch)
      if (c.settlement || c.costMicros || c.promptTokens || c.completionTokens)
        this.pending.set(`${c.counted.accountId}\0${c.counted.keyId}`, c.counted)
    this.running ??= this.drain(now).finally(() => {
      this.running = null
    })
    return this.running
  }

  private async drain(now: () => number): Promise<void> {
    while (this.pending.size) {
      const pairs = [...this.pending.values()]
      this.pending.clear()
      const at = now()
      for (const p of pairs) {
        try {
          await this.check(p.accountId, p.keyId, at)
        } catch (err) {
          this.deps.log.warn('alert thresholds not checked', {
            account_id: p.accountId,
            error: (err as Error).message,
          })
        }
      }
    }
  }

  private async check(accountId: number, keyId: string, now: number): Promise<void> {
    const { store, config } = this.deps
    const [account, key] = await Promise.all([store.getAccount(accountId), store.getKey(keyId)])
    if (!account) return
    const plan = planState(config, account, now).plan
    // A budget's spend is one counter read; a `tpd` row sums the day's admissions (store/sqlite/
    // charges.ts), so it is read at most once a TOKENS_EVERY_MS per (account, key).
    const pair = `${accountId}\0${keyId}`
    const tokensDue = now - (this.tokensReadAt.get(pair) ?? 0) >= TOKENS_EVERY_MS
    const rows = [...(plan ? accountRows(plan) : []), ...keyRows(key?.limits ?? null)].filter((r) =>
      r.resource === 'tokens'
        ? tokensDue && this.alerts.wants('tokens.threshold')
        : this.alerts.wants('budget.threshold'),
    )
    if (rows.some((r) => r.resource === 'tokens')) {
      if (this.tokensReadAt.size >= 100_000) this.tokensReadAt.clear()
      this.tokensReadAt.set(pair, now)
    }
    if (!rows.length) return
    const states = await store.rowStates({ accountId, keyId, now, rows })
    for (const s of states) this.crossed(s, account.name, accountId, keyId, now)
  }

  private crossed(s: RowState, accountName: string, accountId: number, keyId: string, now: number): void {
    const { row } = s
    const percent = (s.used / row.capacity) * 100
    const money = row.resource === 'microdollars'
    const event = money ? 'budget.threshold' : 'tokens.threshold'
    const start = money ? periodBounds(row.period!, now).start : now - (now % DAY_MS)
    const scope = row.scope === 'account' ? `account:${accountId}` : `key:${keyId}`
    for (const t of THRESHOLDS) {
      if (percent < t) break
      const data: Record<string, unknown> = {
        threshold_percent: t,
        scope: row.scope,
        account: accountName,
        account_id: accountId,
        key_id: row.scope === 'key' ? keyId : null,
        period: money ? row.period : 'day',
        period_start: new Date(start).toISOString(),
        ...(money
          ? { budget_usd: row.capacity / 1_000_000, spent_usd: s.used / 1_000_000 }
          : { tpd: row.capacity, tokens_used: s.used }),
        used_percent: Math.round(percent * 10) / 10,
      }
      this.alerts.emit(event, data, `${event}:${scope}:${money ? row.period : 'tpd'}:${start}:${t}`)
    }
  }
}
