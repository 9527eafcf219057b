/**
 * @module
 * The overview's reads on PostgreSQL, the same contract as `../sqlite/overview.ts`: one day of
 * the daily rollups grouped by key or account, and the newest `scan` request-log rows counted by
 * outcome (a circuit refusal — no upstream called — apart). Bun.SQL tagged templates: every value is a bound parameter.
 */
import type { SQL } from 'bun'
import { num, numOrNull } from '../account-rows.ts'
import type { OutcomeRow, OutcomesQuery, TopQuery, TopRow } from '../overview-types.ts'

export async function pgTopOfDay(sql: SQL, q: TopQuery): Promise<TopRow[]> {
  const rows = (await (q.by === 'key'
    ? sql`SELECT key_id AS id, MIN(account_id) AS account_id, SUM(requests) AS requests,
          SUM(prompt_tokens + completion_tokens) AS tokens, SUM(errors) AS errors, SUM(rate_limited) AS rate_limited
        FROM usage_daily WHERE t = ${q.day} GROUP BY key_id
        ORDER BY SUM(requests) + SUM(rate_limited) DESC, key_id LIMIT ${q.limit}`
    : sql`SELECT account_id::text AS id, account_id, SUM(requests) AS requests,
          SUM(prompt_tokens + completion_tokens) AS tokens, SUM(errors) AS errors, SUM(rate_limited) AS rate_limited
        FROM usage_daily WHERE t = ${q.day} GROUP BY account_id
        ORDER BY SUM(requests) + SUM(rate_limited) DESC, account_id LIMIT ${q.limit}`)) as Array<
    Record<string, unknown>
  >
  return rows.map((r) => ({
    id: String(r.id),
    accountId: num(r.account_id),
    requests: num(r.requests),
    tokens: num(r.tokens),
    errors: num(r.errors),
    rateLimited: num(r.rate_limited),
  }))
}

export async function pgRecentOutcomes(sql: SQL, q: OutcomesQuery): Promise<OutcomeRow[]> {
  const rows = (await sql`
    SELECT model, answered_by, status, error_code, refused, COUNT(*) AS n,
      MAX(created_at) AS last_at, MIN(created_at) AS first_at
    FROM (SELECT model, answered_by, status, error_code,
            CASE WHEN error_code = 'upstream_circuit_open' AND COALESCE(attempts, 0) = 0 THEN 1 ELSE 0 END AS refused,
            created_at
          FROM requests
          WHERE created_at >= ${q.from} AND created_at < ${q.to} ORDER BY created_at DESC LIMIT ${q.scan}) s
    GROUP BY model, answered_by, status, error_code, refused`) as Array<Record<string, unknown>>
  return rows.map((r) => ({
    model: String(r.model),
    status: numOrNull(r.status),
    errorCode: (r.error_code as string | null) ?? null,
    answeredBy: (r.answered_by as string | null) ?? null,
    refused: num(r.refused) === 1,
    count: num(r.n),
    lastAt: num(r.last_at),
    firstAt: num(r.first_at),
  }))
}
