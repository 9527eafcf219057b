/**
 * @module
 * Usage: outcomes of admitted requests (written in batches) and the summaries `/v1/usage` shows.
 */
import type { Database } from 'bun:sqlite'
import type { Completion, UsageSummary, UsageTotals } from '../types.ts'

interface TotalsRow {
  requests: number
  prompt_tokens: number | null
  completion_tokens: number | null
  errors: number | null
}

const TOTALS = `COUNT(*) AS requests, SUM(prompt_tokens) AS prompt_tokens,
  SUM(completion_tokens) AS completion_tokens, SUM(status >= 400) AS errors`

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
        null,
        [number, number | null, number | null, number, number | null, string | null, number]
      >(
        `UPDATE requests SET status = ?, prompt_tokens = ?, completion_tokens = ?, latency_ms = ?, ttft_ms = ?,
         error_code = ? WHERE id = ?`,
      ),
      totals: db.query<TotalsRow, [number, number]>(
        `SELECT ${TOTALS} FROM requests WHERE account_id = ? AND created_at >= ?`,
      ),
      byModel: db.query<TotalsRow & { model: string }, [number, number]>(
        `SELECT model, ${TOTALS} FROM requests WHERE account_id = ? AND created_at >= ? GROUP BY model ORDER BY model`,
      ),
      pruneRequests: db.query<null, [number]>('DELETE FROM requests WHERE created_at < ?'),
    }
    this.completeTx = db.transaction((batch: Completion[]) => {
      for (const c of batch) {
        this.q.complete.run(
          c.status,
          c.promptTokens,
          c.completionTokens,
          c.latencyMs,
          c.ttftMs,
          c.errorCode,
          c.usageId,
        )
      }
    }).immediate as never
  }

  complete(batch: Completion[]): void {
    if (batch.length) this.completeTx(batch)
  }

  summary(accountId: number, now: number, dayStart: number): UsageSummary {
    const byModel: Record<string, UsageTotals> = {}
    for (const r of this.q.byModel.all(accountId, dayStart)) byModel[r.model] = toTotals(r)
    return {
      today: toTotals(this.q.totals.get(accountId, dayStart)),
      last_24h: toTotals(this.q.totals.get(accountId, now - 86_400_000 + 1)),
      by_model: byModel,
    }
  }

  prune(before: number): void {
    this.q.pruneRequests.run(before)
  }
}
