/**
 * @module
 * `budget.threshold` and `tokens.threshold` (DESIGN §15): after a batch of outcomes is in the
 * store (the usage flush, off the request path), the accounts and keys it charged are checked —
 * what each budget row has spent this calendar period, what each `tpd` row holds in its rolling
 * day — and every threshold crossed (50, 80, 100 %) is queued once per period: the mark of
 * (scope, row, period start, threshold) is written with the deliveries, so other processes,
 * replicas and restarts never send it twice. `tpd` is a rolling window with no period of its own:
 * its "period" is the UTC day the threshold was crossed in.
 *
 * Reading is the cost (the usage flush runs several times a second under load), so a check reads
 * the store only when something can have crossed. A read leaves, per account and per key and per
 * resource (micro-dollars, tokens), the room left before the next threshold of its rows; each flush
 * adds what its outcomes charged (their settlements, else their cost and tokens); the rows are read
 * again when that sum reaches the room, when a period (or, for `tpd`, the UTC day) ends, and at
 * least every {@link REFRESH_MS} while charged — what this process cannot see (another worker's or
 * replica's charges, reservations still in flight, a plan or key limit changed) is seen within it.
 * A crossing by this process's own settled charges is seen at the flush that makes it.
 */

import { planState } from '../accounts/plans.ts'
import type { Config } from '../config/index.ts'
import { type LimitRow, periodBounds, type RowState, usdToMicros } from '../limits/rows.ts'
import type { Completion, KeyLimits, Store } from '../store/index.ts'
import type { Logger } from '../util/log.ts'
import { setBounded } from '../util/map.ts'
import type { Alerts } from './alerts.ts'

export const THRESHOLDS = [50, 80, 100] as const
/** The longest a `tokens.threshold` may come after its crossing: a `tpd` row is read this often at most. */
export const TOKENS_EVERY_MS = 30_000
/**
 * How long a read stands for the store while its account or key keeps being charged (ms): past it
 * the account, the key and their rows are read again. Bounds how late a crossing this process
 * cannot see (another process's charges, a changed limit) is found.
 */
export const REFRESH_MS = 30_000
/** Accounts and keys remembered at most; past it the memory starts again (each is read afresh). */
const MAX_WATCHED = 100_000

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

/** One resource of an account's or a key's rows, as of its last read. */
interface Gauge {
  rows: LimitRow[]
  /** Charged since the read by this process's flushes (micro-dollars or tokens). */
  since: number
  /** The least, over `rows`, of what was left before its next threshold (Infinity: all crossed). */
  room: number
  /** When the rows were last read (epoch ms; 0: never) and when they must be read again regardless. */
  readAt: number
  until: number
}

/** An account or a key: its rows as last read from the store, by resource. */
interface Watched {
  /** When the account (its plan) or the key (its limits) was read (epoch ms). */
  readAt: number
  /** The account's name (for the alert's data); a key's is its account's. */
  name: string
  /** The account and key of the charge that read it: what its rows are read with. */
  owner: { accountId: number; keyId: string }
  money: Gauge
  tokens: Gauge
}

/** What one flush charged one account or key. */
interface Charged {
  accountId: number
  keyId: string
  micros: number
  tokens: number
}

const gauge = (rows: LimitRow[], prev: Gauge | undefined): Gauge => ({
  rows,
  since: 0,
  room: 0, // due: the rows are read on this check
  readAt: prev?.readAt ?? 0,
  until: 0,
})

/** What is left of `s`'s row before its next threshold; Infinity when all are crossed. */
function roomOf(s: RowState): number {
  for (const t of THRESHOLDS) {
    const at = (s.row.capacity * t) / 100
    if (s.used < at) return at - s.used
  }
  return Number.POSITIVE_INFINITY
}

export class ThresholdWatch {
  /** Accounts and keys charged since the running check took its own: checked after it. */
  private pendingAccounts = new Map<number, Charged>()
  private pendingKeys = new Map<string, Charged>()
  private running: Promise<void> | null = null
  private readonly accounts = new Map<number, Watched>()
  private readonly keys = new Map<string, Watched>()

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
   * check runs at a time; what is charged meanwhile waits for it and is checked once after it, so
   * flushes faster than the checks never pile reads onto the store.
   */
  written(batch: Completion[], now: () => number): Promise<void> {
    for (const c of batch) {
      const micros = c.settlement ? c.settlement.micros : (c.costMicros ?? 0)
      const tokens = c.settlement ? c.settlement.tokens : (c.promptTokens ?? 0) + (c.completionTokens ?? 0)
      if (!c.settlement && !micros && !tokens) continue
      const { accountId, keyId } = c.counted
      add(this.pendingAccounts, accountId, { accountId, keyId, micros, tokens })
      add(this.pendingKeys, keyId, { accountId, keyId, micros, tokens })
    }
    return this.check(now)
  }

  /**
   * Reads the accounts and keys charged since their last read, if that read is REFRESH_MS old
   * (AlertService runs this every REFRESH_MS): a crossing this process could not see — another
   * process's charges, the last before traffic stopped — is found even when no flush comes again.
   */
  sweep(now: () => number): Promise<void> {
    const at = now()
    const stale = (w: Watched) =>
      at >= w.readAt + REFRESH_MS &&
      ((w.money.since > 0 && w.money.rows.length > 0) || (w.tokens.since > 0 && w.tokens.rows.length > 0))
    for (const w of this.accounts.values())
      if (stale(w)) add(this.pendingAccounts, w.owner.accountId, { ...w.owner, micros: 0, tokens: 0 })
    for (const w of this.keys.values())
      if (stale(w)) add(this.pendingKeys, w.owner.keyId, { ...w.owner, micros: 0, tokens: 0 })
    return this.check(now)
  }

  private check(now: () => number): Promise<void> {
    this.running ??= this.drain(now).finally(() => {
      this.running = null
    })
    return this.running
  }

  private async drain(now: () => number): Promise<void> {
    while (this.pendingAccounts.size || this.pendingKeys.size) {
      const accounts = [...this.pendingAccounts.values()]
      const keys = [...this.pendingKeys.values()]
      this.pendingAccounts.clear()
      this.pendingKeys.clear()
      const at = now()
      for (const c of accounts) await this.guarded(c, () => this.checkAccount(c, at))
      for (const c of keys) await this.guarded(c, () => this.checkKey(c, at))
    }
  }

  private async guarded(c: Charged, check: () => Promise<void>): Promise<void> {
    try {
      await check()
    } catch (err) {
      this.deps.log.warn('alert thresholds not checked', {
        account_id: c.accountId,
        error: (err as Error).message,
      })
    }
  }

  /** The account's own rows (its plan's budget and `tpd`), read when they may have crossed. */
  private async checkAccount(c: Charged, now: number): Promise<void> {
    const w = await this.account(c.accountId, now, c)
    if (w) await this.read(w, c, now)
  }

  /** The key's own rows (its limits' budget and `tpd`). */
  private async checkKey(c: Charged, now: number): Promise<void> {
    let w = this.keys.get(c.keyId)
    if (!w || now >= w.readAt + REFRESH_MS) {
      const [account, key] = await Promise.all([
        this.account(c.accountId, now, c),
        this.deps.store.getKey(c.keyId),
      ])
      if (!account || !key) {
        this.keys.delete(c.keyId)
        return
      }
      w = watched(account.name, keyRows(key.limits), now, w, c)
      setBounded(this.keys, c.keyId, w, MAX_WATCHED)
    }
    await this.read(w, c, now)
  }

  /** The account as last read, read again when it is new or its read is older than REFRESH_MS. */
  private async account(accountId: number, now: number, owner: Charged): Promise<Watched | null> {
    const w = this.accounts.get(accountId)
    if (w && now < w.readAt + REFRESH_MS) return w
    const account = await this.deps.store.getAccount(accountId)
    if (!account) {
      this.accounts.delete(accountId)
      return null
    }
    const plan = planState(this.deps.config, account, now).plan
    const fresh = watched(account.name, plan ? accountRows(plan) : [], now, w, owner)
    setBounded(this.accounts, accountId, fresh, MAX_WATCHED)
    return fresh
  }

  /** Adds `c`'s charge to `w`'s gauges and reads the rows that may have crossed a threshold. */
  private async read(w: Watched, c: Charged, now: number): Promise<void> {
    const { alerts } = this
    w.money.since += c.micros
    w.tokens.since += c.tokens
    const due = (g: Gauge) => g.rows.length > 0 && (g.since >= g.room || now >= g.until)
    const money = alerts.wants('budget.threshold') && due(w.money)
    // A `tpd` row sums the day's admissions (store/sqlite/charges.ts): read at most every TOKENS_EVERY_MS.
    const tokens =
      alerts.wants('tokens.threshold') && due(w.tokens) && now - w.tokens.readAt >= TOKENS_EVERY_MS
    if (!money && !tokens) return
    const rows = [...(money ? w.money.rows : []), ...(tokens ? w.tokens.rows : [])]
    const states = await this.deps.store.rowStates({ accountId: c.accountId, keyId: c.keyId, now, rows })
    if (money) reset(w.money, now, periodEnd(w.money.rows, now))
    if (tokens) reset(w.tokens, now, now - (now % DAY_MS) + DAY_MS)
    for (const s of states) {
      const g = s.row.resource === 'microdollars' ? w.money : w.tokens
      g.room = Math.min(g.room, roomOf(s))
      this.crossed(s, w.name, c.accountId, c.keyId, now)
    }
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

function add<K>(m: Map<K, Charged>, k: K, c: Charged): void {
  const had = m.get(k)
  if (had) {
    had.micros += c.micros
    had.tokens += c.tokens
  } else m.set(k, { ...c })
}

/** A fresh read of an account's or key's rows: every gauge due, the `tpd` read time kept. */
function watched(
  name: string,
  rows: LimitRow[],
  now: number,
  prev: Watched | undefined,
  owner: Charged,
): Watched {
  return {
    readAt: now,
    name,
    owner: { accountId: owner.accountId, keyId: owner.keyId },
    money: gauge(
      rows.filter((r) => r.resource === 'microdollars'),
      prev?.money,
    ),
    tokens: gauge(
      rows.filter((r) => r.resource === 'tokens'),
      prev?.tokens,
    ),
  }
}

function reset(g: Gauge, now: number, until: number): void {
  g.since = 0
  g.room = Number.POSITIVE_INFINITY
  g.readAt = now
  g.until = until
}

/** The earliest end of the budget periods of `rows` (epoch ms). */
function periodEnd(rows: LimitRow[], now: number): number {
  let end = Number.POSITIVE_INFINITY
  for (const r of rows) if (r.period) end = Math.min(end, periodBounds(r.period, now).resetsAt)
  return end
}
