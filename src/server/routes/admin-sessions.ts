/**
 * @module
 * Admin endpoints for console sessions: `GET /admin/v1/sessions` lists the live ones,
 * `DELETE /admin/v1/sessions/:id` ends one, `POST /admin/v1/sessions/revoke` ends every session
 * of a key (`{"key": ID}`) or of a kind (`{"kind": "admin"}`). Behind the admin guard.
 */
import { Elysia, t } from 'elysia'
import { endSessions, listSessions, sessionSelector } from '../../auth/sessions-admin.ts'
import { adminGuard } from '../admin-guard.ts'
import type { Deps } from '../deps.ts'
import { NoBody } from '../json-body.ts'
import { NoQuery, QueryText } from './no-query.ts'

export function adminSessionRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.admin.sessions', prefix: '/admin/v1' })
    .use(adminGuard(deps))
    .get('/sessions', () => listSessions(deps.store, deps.clock.now()), { query: NoQuery })
    .delete('/sessions/:id', ({ params }) => endSessions(deps.store, sessionSelector({ id: params.id })), {
      body: NoBody,
    })
    .post(
      '/sessions/revoke',
      ({ body, auditChange }) => {
        auditChange({ target: body.key ?? body.kind, change: { key: body.key, kind: body.kind } })
        return endSessions(deps.store, sessionSelector(body))
      },
      {
        body: t.Object({ key: QueryText, kind: QueryText }, { additionalProperties: false }),
      },
    )
}
