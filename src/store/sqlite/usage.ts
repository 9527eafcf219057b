/**
 * @module
 * Usage: outcomes of admitted requests (written in batches) and the summaries `/v1/usage` shows.
 * Summaries come from the per-minute counters (`usage_minutes`), never from the log: an
 * account's volume does not change their cost, which is at most a day's minutes per model.
 */
import type { Database } from 'bun:sqlite'
import type { Completion, UsageSummary, UsageTotals } from '../types.ts'
import { minuteOf } from './limiter.ts'

interface TotalsRow {
  requests: number
  prompt_tokens: number | null
  completion_tokens: number | null
  errors: number | null
}

const TOTALS = `SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens,
  SUM(completion_tokens) AS completion_tokens, SUM(errors) AS errors`

const toTotals = (r: TotalsRow | null): UsageTotals => {
  const prompt = r?.prompt_tokens ?? 0
  const completion = r?.completion_tokens ?? 0
  return {
    requests: r?.requests ?? 0,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    errors: r?.errors ?? 0,
  }
}

export class UsageQueries {
  private readonly q
  private readonly completeTx: (batch: Completion[]) => void

  constructor(db: Database) {
    this.q = {
      complete: db.query<
        { account_id: number; model: string; created_at: number },
        [number, number | null, number | null, number, number | null, string | null, number]
      >(
        `UPDATE requests SET status = ?, prompt_tokens = ?, completion_tokens = ?, latency_ms = ?, ttft_ms = ?,
         error_code = ? WHERE id = ? AND status IS NULL RETURNING account_id, model, created_at`,
      ),
      // The row exists: admission counted the request in the same minute.
      countOutcome: db.query<null, [number, number, number, number, number, string]>(
        `UPDATE usage_minutes SET prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?,
         errors = errors + ? WHERE account_id = ? AND minute = ? AND model = ?`,
      ),
      totals: db.query<TotalsRow, [number, number]>(
        `SELECT ${TOTALS} FROM usage_minutes WHERE account_id = ? AND minute >= ?`,
      ),
      byModel: db.query<TotalsRow & { model: string }, [number, number]>(
        `SELECT model, ${TOTALS} FROM usage_minutes WHERE account_id = ? AND minute >= ? GROUP BY model ORDER BY model`,
      ),
      pruneRequests: db.query<null, [number]>('DELETE FROM requests WHERE created_at < ?'),
      pruneCounters: db.query<null, [number]>('DELETE FROM usage_minutes WHERE minute < ?'),
    }
    this.completeTx = db.transaction((batch: Completion[]) => {
      for (const c of batch) {
        // An outcome is written once (a retried batch must not count its tokens twice).
        const row = this.q.complete.get(
          c.status,
          c.promptTokens,
          c.completionTokens,
          c.latencyMs,
          c.ttftMs,
          c.errorCode,
          c.usageId,
        )
        if (!row) continue
        this.q.countOutcome.run(
          c.promptTokens ?? 0,
          c.completionTokens ?? 0,
          c.status >= 400 ? 1 : 0,
          row.account_id,
          minuteOf(row.created_at),
          row.model,
        )
      }
    }).immediate as never
  }

  complete(batch: Completion[]): void {
    if (batch.length) this.completeTx(batch)
  }

  /** `today` and `by_model` from `dayStart` (a UTC midnight); `last_24h` is the last 1,440 minutes, this one included. */
  summary(accountId: number, now: number, dayStart: number): UsageSummary {
    const today = minuteOf(dayStart)
    const byModel: Record<string, UsageTotals> = {}
    for (const r of this.q.byModel.all(accountId, today)) byModel[r.model] = toTotals(r)
    return {
      today: toTotals(this.q.totals.get(accountId, today)),
      last_24h: toTotals(this.q.totals.get(accountId, minuteOf(now) - 1439)),
      by_model: byModel,
    }
  }

  prune(before: number): void {
    this.q.pruneRequests.run(before)
    this.q.pruneCounters.run(minuteOf(before))
  }
}
