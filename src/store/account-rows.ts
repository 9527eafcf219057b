/**
 * @module
 * Accounts, keys and plan history rows → records, for both SQL backends: their columns are the
 * same, only the values' types differ (PostgreSQL sends BIGINT as a string and a boolean as one;
 * SQLite integers for both). As key-limits.ts, shared so both read the same shape.
 */
import { type KeyLimitColumns, keyLimitsOf } from './key-limits.ts'
import type { AccountRecord, KeyRecord, KeyState, PlanChange } from './types.ts'

type Row = Record<string, unknown>

/**
 * A number column as a number: PostgreSQL sends BIGINT as a string (it may exceed 2^53), SQLite a
 * number. Ours are epoch ms, ids and counts, below 2^53, so exact however they arrive.
 */
export const num = (v: unknown): number => Number(v)
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))

/**
 * An accounts row. `prefix`: what a join put before the account's columns (`a_` beside a key's),
 * none for a row of accounts itself (a literal, so `rows.map(accountOf)` cannot pass an index).
 */
export function accountOf(row: object, prefix: '' | 'a_' = ''): AccountRecord {
  const r = row as Row
  const enabled = r[`${prefix}enabled`]
  return {
    id: num(r[`${prefix}id`]),
    name: r[`${prefix}name`] as string,
    plan: r[`${prefix}plan`] as string,
    enabled: enabled === true || enabled === 1,
    planStartedAt: num(r[`${prefix}plan_started_at`]),
    planExpiresAt: numOrNull(r[`${prefix}plan_expires_at`]),
    createdAt: num(r[`${prefix}created_at`]),
  }
}

/** An api_keys row joined with its account's name (`account_name`) and last use (`last_used_at`). */
export function keyOf(row: object): KeyRecord {
  const r = row as Row
  return {
    id: r.id as string,
    accountId: num(r.account_id),
    accountName: r.account_name as string,
    name: (r.name as string | null) ?? null,
    prefix: r.prefix as string,
    state: r.state as KeyState,
    createdAt: num(r.created_at),
    rotatedAt: numOrNull(r.rotated_at),
    lastUsedAt: numOrNull(r.last_used_at),
    suspendedUntil: numOrNull(r.suspended_until),
    limits: keyLimitsOf(r as KeyLimitColumns),
  }
}

/** A plan_history row. */
export function planChangeOf(row: object): PlanChange {
  const r = row as Row
  return {
    plan: r.plan as string,
    startedAt: num(r.started_at),
    expiresAt: numOrNull(r.expires_at),
    reason: r.reason as string,
    createdAt: num(r.created_at),
  }
}
