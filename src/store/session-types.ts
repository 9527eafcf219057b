/**
 * @module
 * Listing and ending console sessions for the operator (`switchyard sessions`, the admin API).
 * A session is named by the first 16 hex digits of its token's SHA-256 (the stored key): enough
 * to tell sessions apart, useless for signing in.
 */

export interface ConsoleSessionInfo {
  id: string
  kind: 'admin' | 'key'
  keyId: string | null
  createdAt: number
  expiresAt: number
}

/** Which sessions to end: one by id, every one of a key, of an account's keys, or of a kind. */
export type SessionSelector =
  | { id: string }
  | { keyId: string }
  | { accountId: number }
  | { kind: 'admin' | 'key' }

export interface SessionAdminStore {
  /** Live sessions, newest first, at most `limit`. */
  listSessions(now: number, limit: number): Promise<ConsoleSessionInfo[]>
  /** Ends the selected sessions; resolves to how many there were. */
  endSessions(sel: SessionSelector): Promise<number>
}
