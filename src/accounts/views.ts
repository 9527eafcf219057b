/**
 * @module
 * Keys and plan changes as the admin API and the command line show them: never the hash, times as
 * ISO text, a suspension only while it lasts.
 */
import type { KeyRecord, PlanChange } from '../store/index.ts'
import { iso } from '../util/clock.ts'
import { clip } from '../util/text.ts'
import { type KeyLimitsView, keyLimitsView } from './key-limits.ts'

/**
 * A name or id as a message repeats it: at most 64 characters (the longest valid account name),
 * then an ellipsis. A refused value can be as long as the body or URL that carried it, and the
 * reply must not be (a 50 MB name came back in a 50 MB 400).
 */
export const shown = (value: string) => clip(value, 64)

export interface KeyView {
  id: string
  account: string
  name: string | null
  prefix: string
  state: 'enabled' | 'disabled' | 'revoked'
  suspended_until: string | null
  created_at: string | null
  rotated_at: string | null
  last_used_at: string | null
  /** The key's own limits, within its account's (every field null: the plan's alone apply). */
  limits: KeyLimitsView
}

export interface NewKey {
  id: string
  key: string
  prefix: string
  account: string
  name: string | null
  limits: KeyLimitsView
}

export const keyView = (k: KeyRecord, now: number): KeyView => ({
  id: k.id,
  account: k.accountName,
  name: k.name,
  prefix: k.prefix,
  state: k.state,
  suspended_until: k.suspendedUntil !== null && k.suspendedUntil > now ? iso(k.suspendedUntil) : null,
  created_at: iso(k.createdAt),
  rotated_at: iso(k.rotatedAt),
  last_used_at: iso(k.lastUsedAt),
  limits: keyLimitsView(k.limits),
})

/** One plan change as the admin API's plan history and an account's `/v1/usage` show it. */
export const planChangeView = (h: PlanChange) => ({
  plan: h.plan,
  started_at: iso(h.startedAt),
  expires_at: iso(h.expiresAt),
  reason: h.reason,
  changed_at: iso(h.createdAt),
})
