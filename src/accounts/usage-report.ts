/**
 * @module
 * The `/v1/usage` document, shared by the HTTP route and `switchyard usage ACCOUNT`.
 */
import type { Config, PlanConfig } from '../config/index.ts'
import { WINDOW_COUNTS, type WindowName } from '../config/limit-settings.ts'
import { windowView } from '../limits/index.ts'
import type { AccountRecord, KeyRecord, Store } from '../store/index.ts'
import { type Clock, iso } from '../util/clock.ts'
import { keyLimitsView } from './key-limits.ts'
import { currentPlan, expiryPolicy, type PlanState } from './plans.ts'
import { costedSummary, tokenUsage } from './usage-tokens.ts'
import { planChangeView } from './views.ts'

const startOfUtcDay = (t: number) => t - (t % 86_400_000)

/** `rate_limits`' limits: each setting that makes a window row (config/limit-settings.ts), null for none. */
const windowSettings = (plan: PlanConfig | null) =>
  Object.fromEntries(WINDOW_COUNTS.map((s) => [s.name, plan?.[s.name] ?? null])) as {
    [N in WindowName]: number | null
  }

/** Why requests with this key are refused, or null when they are served. */
export function refusal(key: KeyRecord | null, state: PlanState, now: number): string | null {
  if (key?.state === 'revoked') return 'key_revoked'
  if (key?.state === 'disabled') return 'key_disabled'
  if (!state.account.enabled) return 'account_disabled'
  if (key?.suspendedUntil && key.suspendedUntil > now) return 'key_suspended'
  if (!state.plan) return 'plan_not_configured'
  if (state.status === 'expired') return 'plan_expired'
  return null
}

export async function usageReport(
  deps: { store: Store; config: Config; clock: Clock },
  account: AccountRecord,
  key: KeyRecord | null,
) {
  const now = deps.clock.now()
  const state = await currentPlan(deps.store, deps.config, account, now)
  const plan = state.plan
  const rpm = plan?.rpm ?? null
  const rpd = plan?.rpd ?? null
  const [w, summary, history, tokens] = await Promise.all([
    deps.store.windows(account.id, now, rpm, rpd),
    deps.store.usageSummary(account.id, now, startOfUtcDay(now)),
    deps.store.planHistory(account.id),
    tokenUsage(deps.store, { accountId: account.id, key, plan, now }),
  ])
  const costed = costedSummary(summary)
  const reason = refusal(key, state, now)
  const suspendedUntil = key?.suspendedUntil && key.suspendedUntil > now ? key.suspendedUntil : null
  return {
    object: 'usage' as const,
    account_information: {
      account_id: state.account.id,
      name: state.account.name,
      plan: state.name,
      is_enabled: reason === null,
      disabled_reason: reason,
      account_enabled: state.account.enabled,
      created_at: iso(state.account.createdAt),
      key: key && {
        id: key.id,
        name: key.name,
        prefix: key.prefix,
        state: key.state,
        suspended: suspendedUntil !== null,
        suspended_until: iso(suspendedUntil),
        limits: keyLimitsView(key.limits),
        // What is left of them, as `rate_limits` and `budget` show the account's.
        rate_limits: tokens.keyLimits,
      },
    },
    rate_limits: {
      ...windowSettings(plan),
      minute: windowView(w.minute, now),
      day: windowView(w.day, now),
      tokens_minute: tokens.tokensMinute,
      tokens_day: tokens.tokensDay,
    },
    budget: tokens.budget,
    subscription_details: {
      plan: state.name,
      status: state.status,
      started_at: iso(state.account.planStartedAt),
      expires_at: iso(state.expiresAt),
      remaining_days: state.remainingDays,
      on_expiry: state.expiresAt === null ? null : expiryPolicy(deps.config, state.name),
      models: plan?.models ?? [],
      history: history.map(planChangeView),
    },
    usage: {
      // `tokens` settled; `reserved_tokens` held by requests still in flight.
      current_minute: {
        requests: w.minute.used,
        tokens: tokens.tokensMinute.used,
        reserved_tokens: tokens.tokensMinute.reserved,
      },
      current_day: {
        requests: w.day.used,
        tokens: tokens.tokensDay.used,
        reserved_tokens: tokens.tokensDay.reserved,
      },
      today: costed.today,
      last_24h: costed.last_24h,
      by_model: costed.by_model,
      day_starts_at: iso(startOfUtcDay(now)),
    },
  }
}
