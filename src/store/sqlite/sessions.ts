/**
 * @module
 * Console sessions, stored by the SHA-256 of their token so a copy of the database opens none.
 * In the database (not in memory) so every worker and replica sees a sign-in and a sign-out.
 */
import type { Database } from 'bun:sqlite'
import type { ConsoleSession, ConsoleSessionInfo, SessionSelector } from '../types.ts'

type Row = { kind: 'admin' | 'key'; key_id: string | null; expires_at: number; binding: string | null }
type InfoRow = {
  id: string
  kind: 'admin' | 'key'
  key_id: string | null
  created_at: number
  expires_at: number
}

export class SessionQueries {
  private readonly q

  constructor(db: Database) {
    this.q = {
      insert: db.query<null, [string, string, string | null, number, number, string | null]>(
        'INSERT INTO console_sessions (hash, kind, key_id, created_at, expires_at, binding) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      get: db.query<Row, [string, number]>(
        'SELECT kind, key_id, expires_at, binding FROM console_sessions WHERE hash = ? AND expires_at > ?',
      ),
      delete: db.query<null, [string]>('DELETE FROM console_sessions WHERE hash = ?'),
      expire: db.query<null, [number]>('DELETE FROM console_sessions WHERE expires_at <= ?'),
      list: db.query<InfoRow, [number, number]>(
        `SELECT substr(hash, 1, 16) AS id, kind, key_id, created_at, expires_at FROM console_sessions
         WHERE expires_at > ? ORDER BY created_at DESC LIMIT ?`,
      ),
      endById: db.query<null, [string]>('DELETE FROM console_sessions WHERE substr(hash, 1, 16) = ?'),
      endByKey: db.query<null, [string]>('DELETE FROM console_sessions WHERE key_id = ?'),
      endByAccount: db.query<null, [number]>(
        'DELETE FROM console_sessions WHERE key_id IN (SELECT id FROM api_keys WHERE account_id = ?)',
      ),
      endByKind: db.query<null, [string]>('DELETE FROM console_sessions WHERE kind = ?'),
    }
  }

  create(hash: string, s: ConsoleSession, now: number): void {
    this.q.expire.run(now)
    this.q.insert.run(hash, s.kind, s.keyId, now, s.expiresAt, s.binding)
  }

  get(hash: string, now: number): ConsoleSession | null {
    const r = this.q.get.get(hash, now)
    return r ? { kind: r.kind, keyId: r.key_id, expiresAt: r.expires_at, binding: r.binding } : null
  }

  delete(hash: string): void {
    this.q.delete.run(hash)
  }

  list(now: number, limit: number): ConsoleSessionInfo[] {
    return this.q.list.all(now, limit).map((r) => ({
      id: r.id,
      kind: r.kind,
      keyId: r.key_id,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
    }))
  }

  end(sel: SessionSelector): number {
    if ('id' in sel) return this.q.endById.run(sel.id).changes
    if ('keyId' in sel) return this.q.endByKey.run(sel.keyId).changes
    if ('accountId' in sel) return this.q.endByAccount.run(sel.accountId).changes
    return this.q.endByKind.run(sel.kind).changes
  }
}
