/**
 * @module
 * `GET /admin/v1/refusals`: what the gateway refused before admission, per key, code and UTC hour
 * (401s excepted: no key is known) — the data behind the console's per-key refusals, and how an
 * operator answers "I keep getting 429". Query: `key` (key id) or `account` (name), `from`/`to`
 * (ISO-8601 or epoch ms; default the last 24 hours, at most 93 days).
 *
 * @example
 * GET /admin/v1/refusals?account=alice
 * // { object: 'list', data: [{ hour: '2026-11-24T12:00:00.000Z', key_id, account_id, code: 'rate_limit_exceeded', status: 429, count: 37 }, ...],
 * //   totals: [{ key_id, code, status, count }] }
 */
import { Elysia, t } from 'elysia'
import type { RefusalQuery } from '../../store/index.ts'
import { parseTime } from '../../usage/history.ts'
import { iso } from '../../util/clock.ts'
import { GatewayError } from '../../util/errors.ts'
import { adminGuard } from '../admin-guard.ts'
import type { Deps } from '../deps.ts'
import { QueryText } from './no-query.ts'

const DAY = 86_400_000
const MAX_SPAN = 93 * DAY

export function adminRefusalRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.admin.refusals', prefix: '/admin/v1' }).use(adminGuard(deps)).get(
    '/refusals',
    async ({ query }) => {
      const to = parseTime('to', query.to) ?? deps.clock.now()
      const from = parseTime('from', query.from) ?? to - DAY
      if (to - from > MAX_SPAN || from > to) {
        throw new GatewayError(400, 'invalid_value', 'from/to: at most 93 days, from before to', {
          param: 'from',
        })
      }
      const q: RefusalQuery = { from, to }
      if (query.key) q.keyId = query.key
      else if (query.account) q.accountId = (await deps.accounts.getAccount(query.account)).id
      const rows = await deps.store.refusals(q)
      const totals = new Map<string, { key_id: string; code: string; status: number; count: number }>()
      for (const r of rows) {
        const id = `${r.keyId}\0${r.code}`
        const total = totals.get(id)
        if (total) total.count += r.count
        else totals.set(id, { key_id: r.keyId, code: r.code, status: r.status, count: r.count })
      }
      return {
        object: 'list',
        from: iso(from),
        to: iso(to),
        data: rows.map((r) => ({
          hour: iso(r.t),
          key_id: r.keyId,
          account_id: r.accountId,
          code: r.code,
          status: r.status,
          count: r.count,
        })),
        totals: [...totals.values()].sort((a, b) => b.count - a.count),
      }
    },
    { query: t.Object({ key: QueryText, account: QueryText, from: QueryText, to: QueryText }) },
  )
}
