/**
 * @module
 * `plan.expiring`: a paid plan ends within `alerts.plan_expiring_days` (default 3). Looked for by
 * the sender's process every {@link EXPIRING_EVERY_MS} and at start; each (account, end) is sent
 * once — its mark — so a renewal (a new end) is warned about again before that end.
 */
import type { AccountStore } from '../store/index.ts'
import type { Alerts } from './alerts.ts'

export const EXPIRING_EVERY_MS = 3_600_000
const DAY_MS = 86_400_000
const PAGE = 200

export async function planExpiring(
  store: Pick<AccountStore, 'listAccounts'>,
  alerts: Alerts,
  now: number,
): Promise<void> {
  if (!alerts.wants('plan.expiring')) return
  const horizon = now + alerts.config.planExpiringDays * DAY_MS
  for (let afterId = 0; ; ) {
    const page = await store.listAccounts({ afterId, limit: PAGE })
    for (const a of page) {
      const end = a.planExpiresAt
      if (end === null || end <= now || end > horizon || !a.enabled) continue
      alerts.emit(
        'plan.expiring',
        {
          account: a.name,
          account_id: a.id,
          plan: a.plan,
          expires_at: new Date(end).toISOString(),
          days_left: Math.ceil((end - now) / DAY_MS),
        },
        `plan.expiring:${a.id}:${end}`,
      )
    }
    if (page.length < PAGE) return
    afterId = page.at(-1)!.id
  }
}
