/**
 * @module
 * Listing and ending console sessions on PostgreSQL, the same contract as `../sqlite/sessions.ts`.
 */
import type { SQL } from 'bun'
import { num } from '../account-rows.ts'
import type { ConsoleSessionInfo, SessionSelector } from '../session-types.ts'

export async function pgListSessions(sql: SQL, now: number, limit: number): Promise<ConsoleSessionInfo[]> {
  const rows = (await sql`
    SELECT substr(hash, 1, 16) AS id, kind, key_id, created_at, expires_at FROM console_sessions
    WHERE expires_at > ${now} ORDER BY created_at DESC LIMIT ${limit}`) as Array<Record<string, unknown>>
  return rows.map((r) => ({
    id: String(r.id),
    kind: r.kind as 'admin' | 'key',
    keyId: (r.key_id as string | null) ?? null,
    createdAt: num(r.created_at),
    expiresAt: num(r.expires_at),
  }))
}

export async function pgEndSessions(sql: SQL, sel: SessionSelector): Promise<number> {
  const r =
    'id' in sel
      ? await sql`DELETE FROM console_sessions WHERE substr(hash, 1, 16) = ${sel.id}`
      : 'keyId' in sel
        ? await sql`DELETE FROM console_sessions WHERE key_id = ${sel.keyId}`
        : 'accountId' in sel
          ? await sql`DELETE FROM console_sessions
              WHERE key_id IN (SELECT id FROM api_keys WHERE account_id = ${sel.accountId})`
          : await sql`DELETE FROM console_sessions WHERE kind = ${sel.kind}`
  return r.count
}
