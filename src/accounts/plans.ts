/**
 * @module
 * Plan lifecycle: what plan an account is on at a given time. Expiry is applied lazily on
 * the first look after the end: a `downgrade` is written to the store (and so to the plan
 * history) once; a `disable` leaves the plan in place with status `expired`. A plan no longer in
 * the config has no policy: its accounts are refused (`plan_not_configured`) and left as they are,
 * before and after their end, until it comes back and its own policy applies.
 *
 * The downgrade is written only if the account is still as it was read (the same plan, the same
 * end): several requests, workers or replicas reach the end together, and an operator may renew
 * the plan between a read and the write. Unconditional, each of them recorded the downgrade again,
 * and one that read the account before a renewal put it back on the free plan after it.
 */
import type { Config, PlanConfig } from '../config/index.ts'
import type { AccountRecord, AccountStore } from '../store/index.ts'
import { DAY_MS } from '../util/clock.ts'

export type PlanStatus = 'active' | 'expired'

export interface PlanState {
  account: AccountRecord
  name: string
  /** null when the account's plan is no longer in the config. */
  plan: PlanConfig | null
  status: PlanStatus
  expiresAt: number | null
  remainingDays: number | null
}

/**
 * The policy at a plan's end: downgrade to a plan, or disable. No `on_expiry` = downgrade to the
 * default plan (the default plan itself: disable). null for a plan not in the config: nothing is
 * applied to its accounts (read as a downgrade, a reload that removed a plan moved them all to the
 * default plan, even those its `disable` had shut out, and putting it back did not undo it).
 */
export function expiryPolicy(config: Config, planName: string): { downgrade: string } | 'disable' | null {
  const plan = config.plans[planName]
  if (!plan) return null
  if (plan.on_expiry) return plan.on_expiry
  return planName === config.defaultPlan ? 'disable' : { downgrade: config.defaultPlan }
}

/** Whether `currentPlan` would write a downgrade for this account now. */
export function downgradeDue(config: Config, account: AccountRecord, now: number): boolean {
  const exp = account.planExpiresAt
  if (exp === null || now < exp) return false
  const policy = expiryPolicy(config, account.plan)
  return policy !== null && policy !== 'disable'
}

export async function currentPlan(
  store: Pick<AccountStore, 'setAccountPlan'>,
  config: Config,
  account: AccountRecord,
  now: number,
): Promise<PlanState> {
  // Follow downgrades in order; a chain longer than the number of plans would be a loop.
  for (let hop = 0; hop <= Object.keys(config.plans).length; hop++) {
    const exp = account.planExpiresAt
    if (exp === null || now < exp) break
    const policy = expiryPolicy(config, account.plan)
    if (policy === 'disable' || policy === null) break
    const target = config.plans[policy.downgrade]
    const days = target?.days ?? null
    // Overtaken, this answers the account as it now is, and the loop judges that instead.
    const written = await store.setAccountPlan(
      account.id,
      {
        plan: policy.downgrade,
        startedAt: exp,
        expiresAt: days === null ? null : exp + days * DAY_MS,
        reason: `expired: ${account.plan} downgraded to ${policy.downgrade}`,
        createdAt: now,
      },
      { plan: account.plan, expiresAt: exp },
    )
    account = written.account
  }
  return planState(config, account, now)
}

/** The plan an account is on at `now`, when no downgrade is due (see `downgradeDue`): no store call. */
export function planState(config: Config, account: AccountRecord, now: number): PlanState {
  const exp = account.planExpiresAt
  const expired = exp !== null && now >= exp
  return {
    account,
    name: account.plan,
    plan: config.plans[account.plan] ?? null,
    status: expired ? 'expired' : 'active',
    expiresAt: exp,
    remainingDays: exp === null ? null : expired ? 0 : Math.ceil((exp - now) / DAY_MS),
  }
}
