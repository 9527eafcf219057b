/**
 * @module
 * `GET /admin/v1/deliveries`: the alert deliveries (DESIGN §15), newest first, paged as the other
 * admin lists are (`limit` 1–200, `cursor` = the previous page's `next_cursor`). Each row: the
 * event and its id, the webhook's URL, its state (`pending`, `delivered`, `failed`), tries, the
 * last answer, and the event document sent.
 *
 * @example
 * GET /admin/v1/deliveries?limit=20
 * // { object: 'list', data: [{ id: 12, event_id: 'evt_…', event: 'budget.threshold', url, state: 'delivered', attempts: 2, last_status: 200, … }], next_cursor: '…' }
 */
import { Elysia, t } from 'elysia'
import { fromCursor, notACursor, pageLimit, pageOf, toCursor } from '../../accounts/list-page.ts'
import type { Delivery } from '../../store/index.ts'
import { iso } from '../../util/clock.ts'
import { adminGuard } from '../admin-guard.ts'
import type { Deps } from '../deps.ts'
import { QueryText } from './no-query.ts'

/** The admin view of one delivery. */
export function deliveryView(d: Delivery) {
  return {
    id: d.id,
    event_id: d.eventId,
    event: d.event,
    url: d.url,
    state: d.state,
    attempts: d.attempts,
    last_status: d.lastStatus,
    last_error: d.lastError,
    created_at: iso(d.createdAt),
    next_attempt_at: d.state === 'pending' ? iso(d.nextAt) : null,
    done_at: d.doneAt === null ? null : iso(d.doneAt),
    payload: JSON.parse(d.body) as unknown,
  }
}

function beforeOf(cursor: string | undefined): number | null {
  if (cursor === undefined || cursor === '') return null
  const m = /^d\.(\d{1,15})$/.exec(fromCursor(cursor))
  if (!m) throw notACursor()
  return Number(m[1])
}

export function adminDeliveryRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.admin.deliveries', prefix: '/admin/v1' }).use(adminGuard(deps)).get(
    '/deliveries',
    async ({ query }) => {
      const limit = pageLimit(query.limit)
      const rows = await deps.store.listDeliveries({ beforeId: beforeOf(query.cursor), limit: limit + 1 })
      return pageOf(rows, limit, deliveryView, (d) => toCursor(`d.${d.id}`))
    },
    { query: t.Object({ cursor: QueryText, limit: QueryText }) },
  )
}
