/**
 * @module
 * The overview's reads on SQLite: one day of the daily rollups (its primary key starts with the
 * day, so the read is one range) grouped by key or account, and the newest rows of the request
 * log (the created_at index, newest first, at most `scan` of them) counted by outcome: the model
 * asked for, the one that answered or failed last, status, code, and whether it was a circuit
 * refusal (no upstream called).
 */
import type { Database } from 'bun:sqlite'
import type { OutcomeRow, OutcomesQuery, TopQuery, TopRow } from '../overview-types.ts'

const SUMS = `SUM(requests) AS requests, SUM(prompt_tokens + completion_tokens) AS tokens,
  SUM(errors) AS errors, SUM(rate_limited) AS rate_limited`
const ORDER = 'ORDER BY SUM(requests) + SUM(rate_limited) DESC, id LIMIT ?'
/** A circuit refusal: 503 `upstream_circuit_open` with no upstream called (0 attempts log as NULL). */
const REFUSED = `CASE WHEN error_code = 'upstream_circuit_open' AND COALESCE(attempts, 0) = 0 THEN 1 ELSE 0 END`

interface Top {
  id: string | number
  account_id: number
  requests: number
  tokens: number
  errors: number
  rate_limited: number
}

interface Outcome {
  model: string
  status: number | null
  error_code: string | null
  answered_by: string | null
  refused: number
  n: number
  last_at: number
  first_at: number
}

export class OverviewQueries {
  private readonly q

  constructor(db: Database) {
    this.q = {
      byKey: db.query<Top, [number, number]>(
        `SELECT key_id AS id, MIN(account_id) AS account_id, ${SUMS} FROM usage_daily WHERE t = ? GROUP BY key_id ${ORDER}`,
      ),
      byAccount: db.query<Top, [number, number]>(
        `SELECT account_id AS id, account_id, ${SUMS} FROM usage_daily WHERE t = ? GROUP BY account_id ${ORDER}`,
      ),
      outcomes: db.query<Outcome, [number, number, number]>(
        `SELECT model, answered_by, status, error_code, refused, COUNT(*) AS n,
           MAX(created_at) AS last_at, MIN(created_at) AS first_at
         FROM (SELECT model, answered_by, status, error_code, ${REFUSED} AS refused, created_at
               FROM requests INDEXED BY requests_time
               WHERE created_at >= ? AND created_at < ? ORDER BY created_at DESC LIMIT ?)
         GROUP BY model, answered_by, status, error_code, refused`,
      ),
    }
  }

  top(q: TopQuery): TopRow[] {
    return (q.by === 'key' ? this.q.byKey : this.q.byAccount).all(q.day, q.limit).map((r) => ({
      id: String(r.id),
      accountId: r.account_id,
      requests: r.requests,
      tokens: r.tokens,
      errors: r.errors,
      rateLimited: r.rate_limited,
    }))
  }

  outcomes(q: OutcomesQuery): OutcomeRow[] {
    return this.q.outcomes.all(q.from, q.to, q.scan).map((r) => ({
      model: r.model,
      status: r.status,
      errorCode: r.error_code,
      answeredBy: r.answered_by,
      refused: r.refused === 1,
      count: r.n,
      lastAt: r.last_at,
      firstAt: r.first_at,
    }))
  }
}
