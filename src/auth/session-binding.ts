/**
 * @module
 * A console session is bound to the credential it was opened with, and ends when that changes:
 * an admin session to the admin token (a restart with a new `SWITCHYARD_ADMIN_TOKEN` signs every
 * console out), a key holder's session to its key as it was (rotating, disabling or revoking the
 * key, or disabling its account, ends it; enabling the key or the account again does not bring it
 * back, the session is deleted when found unbound, and disabling ends it when written).
 *
 * The store keeps `SHA-256(session hash, credential)`: per session, so a copy of the database
 * names no credential and no two sessions' bindings are alike.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { AccountRecord, KeyRecord } from '../store/index.ts'

export function bindingOf(sessionHash: string, credential: string): string {
  return createHash('sha256').update(`${sessionHash}\u0000${credential}`).digest('hex')
}

export const adminCredential = (token: string) => `admin\u0000${token}`

/**
 * The key as a session sees it: its id, its secret's prefix and when it was last rotated (both
 * change with the secret). null when the key can open no session: missing, disabled, revoked, or
 * its account disabled (its requests are refused, 403 `account_disabled`). A suspension or an
 * expired plan leaves the credential as it is: the key holder's page is where they are explained.
 */
export function keyCredential(key: KeyRecord | null, account: AccountRecord | null): string | null {
  if (key?.state !== 'enabled' || !account?.enabled) return null
  return `key\u0000${key.id}\u0000${key.prefix}\u0000${key.rotatedAt ?? 0}`
}

/** Whether a stored binding is this session's binding to this credential (constant time). */
export function boundTo(binding: string | null, sessionHash: string, credential: string | null): boolean {
  if (binding === null || credential === null) return false
  const want = Buffer.from(bindingOf(sessionHash, credential))
  const got = Buffer.from(binding)
  return got.length === want.length && timingSafeEqual(got, want)
}
