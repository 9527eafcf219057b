/**
 * @module
 * Console sessions, stored by the SHA-256 of their token so a copy of the database opens none.
 * In the database (not in memory) so every worker and replica sees a sign-in and a sign-out.
 */
import type { Database } from 'bun:sqlite'
import type { ConsoleSession } from '../types.ts'

export class SessionQueries {
  private readonly q

  constructor(db: Database) {
    this.q = {
      insert: db.query<null, [string, string, string | null, number, number]>(
        'INSERT INTO console_sessions (hash, kind, key_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      ),
      get: db.query<{ kind: 'admin' | 'key'; key_id: string | null; expires_at: number }, [string, number]>(
        'SELECT kind, key_id, expires_at FROM console_sessions WHERE hash = ? AND expires_at > ?',
      ),
      delete: db.query<null, [string]>('DELETE FROM console_sessions WHERE hash = ?'),
      expire: db.query<null, [number]>('DELETE FROM console_sessions WHERE expires_at <= ?'),
    }
  }

  create(hash: string, s: ConsoleSession, now: number): void {
    this.q.expire.run(now)
    this.q.insert.run(hash, s.kind, s.keyId, now, s.expiresAt)
  }

  get(hash: string, now: number): ConsoleSession | null {
    const r = this.q.get.get(hash, now)
    return r ? { kind: r.kind, keyId: r.key_id, expiresAt: r.expires_at } : null
  }

  delete(hash: string): void {
    this.q.delete.run(hash)
  }
}
