/**
 * @module
 * Listing and ending console sessions, for the admin API and `switchyard sessions`: one way for
 * both, every refusal a 400 naming its parameter.
 *
 * @example
 * await endSessions(store, { id: '3f9a0c51d2e4b6a7' })
 */
import type { SessionSelector, Store } from '../store/index.ts'
import { iso } from '../util/clock.ts'
import { GatewayError, invalidValue } from '../util/errors.ts'
import { clip } from '../util/text.ts'

/** At most this many sessions in one list (sessions are few; this bounds the answer). */
export const MAX_SESSIONS = 1000

export async function listSessions(store: Store, now: number) {
  const rows = await store.listSessions(now, MAX_SESSIONS)
  return {
    object: 'list' as const,
    data: rows.map((s) => ({
      id: s.id,
      kind: s.kind,
      key_id: s.keyId,
      created_at: iso(s.createdAt),
      expires_at: iso(s.expiresAt),
    })),
  }
}

/** Exactly one of: `id` (a session), `key` (every session of a key), `kind` (admin or key). */
export function sessionSelector(q: { id?: string; key?: string; kind?: string }): SessionSelector {
  const given = (['id', 'key', 'kind'] as const).filter((k) => q[k] !== undefined && q[k] !== '')
  if (given.length !== 1) throw invalidValue('id', 'name exactly one of id, key or kind')
  if (q.id !== undefined && q.id !== '') {
    if (!/^[0-9a-f]{16}$/.test(q.id))
      throw invalidValue('id', `'${clip(q.id)}' is not a session id (16 hex digits, see the list)`)
    return { id: q.id }
  }
  if (q.key !== undefined && q.key !== '') {
    if (!/^[A-Za-z0-9_-]{1,100}$/.test(q.key)) throw invalidValue('key', `'${clip(q.key)}' is not a key id`)
    return { keyId: q.key }
  }
  if (q.kind !== 'admin' && q.kind !== 'key') throw invalidValue('kind', "must be 'admin' or 'key'")
  return { kind: q.kind }
}

export async function endSessions(store: Store, sel: SessionSelector) {
  // Keys are never deleted: a key id that names none is a typo, not a key without sessions.
  if ('keyId' in sel && !(await store.getKey(sel.keyId))) {
    throw new GatewayError(
      404,
      'key_not_found',
      `no key with id '${sel.keyId}' (see: switchyard keys list)`,
      {
        param: 'key',
      },
    )
  }
  const ended = await store.endSessions(sel)
  if ('id' in sel && ended === 0)
    throw new GatewayError(404, 'session_not_found', `no live session with id '${sel.id}'`, { param: 'id' })
  return { object: 'console.sessions.ended' as const, ended }
}
