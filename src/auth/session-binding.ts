/**
 * @module
 * A console session is bound to the credential it was opened with, and ends when that changes:
 * an admin session to the admin token (a restart with a new `SWITCHYARD_ADMIN_TOKEN` signs every
 * console out), a key holder's session to its key as it was (rotating, disabling or revoking the
 * key ends it; enabling the key again does not bring it back, the session is deleted when found
 * unbound).
 *
 * The store keeps `SHA-256(session hash, credential)`: per session, so a copy of the database
 * names no credential and no two sessions' bindings are alike.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Store } from '../store/index.ts'

export function bindingOf(sessionHash: string, credential: string): string {
  return createHash('sha256').update(`${sessionHash}\u0000${credential}`).digest('hex')
}

export const adminCredential = (token: string) => `admin\u0000${token}`

/**
 * The key as a session sees it: its id, its secret's prefix and when it was last rotated (both
 * change with the secret). null when the key can open no session (missing, disabled, revoked).
 */
export async function keyCredential(store: Store, keyId: string | null): Promise<string | null> {
  const key = keyId === null ? null : await store.getKey(keyId)
  if (key?.state !== 'enabled') return null
  return `key\u0000${key.id}\u0000${key.prefix}\u0000${key.rotatedAt ?? 0}`
}

/** Whether a stored binding is this session's binding to this credential (constant time). */
export function boundTo(binding: string | null, sessionHash: string, credential: string | null): boolean {
  if (binding === null || credential === null) return false
  const want = Buffer.from(bindingOf(sessionHash, credential))
  const got = Buffer.from(binding)
  return got.length === want.length && timingSafeEqual(got, want)
}
