/**
 * @module
 * Usage: outcomes of admitted requests (written in batches) and the summaries `/v1/usage` shows.
 */
import type { Database } from 'bun:sqlite'
import type { Completion, RetentionPolicy, UsageSummary, UsageTotals } from '../types.ts'
import type { RollupQueries } from './rollups.ts'

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

  constructor(
    db: Database,
    private readonly rollups: RollupQueries,
  ) {
    this.q = {
      complete: db.query<
        { account_id: number; key_id: string; model: string; surface: string; created_at: number },
        [number, number | null, number | null, number, number | null, string | null, number]
      >(
        `UPDATE requests SET status = ?, prompt_tokens = ?, completion_tokens = ?, latency_ms = ?, ttft_ms = ?,
         error_code = ? WHERE id = ? RETURNING account_id, key_id, model, surface, created_at`,
      ),
      totals: db.query<TotalsRow, [number, number]>(
        `SELECT ${TOTALS} FROM requests WHERE account_id = ? AND created_at >= ?`,
      ),
      byModel: db.query<TotalsRow & { model: string }, [number, number]>(
        `SELECT model, ${TOTALS} FROM requests WHERE account_id = ? AND created_at >= ? GROUP BY model ORDER BY model`,
      ),
      pruneOld: db.query<null, [number, number]>(
        'DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE created_at < ? ORDER BY created_at LIMIT ?)',
      ),
      maxId: db.query<{ id: number | null }, []>('SELECT MAX(id) AS id FROM requests'),
      // ids only grow, so max(id) − log_max_rows bounds the rows kept without counting them.
      pruneExcess: db.query<null, [number, number, number]>(
        'DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE id <= ? AND created_at < ? ORDER BY id LIMIT ?)',
      ),
    }
    this.completeTx = db.transaction((batch: Completion[]) => {
      for (const c of batch) {
        const r = this.q.complete.get(
          c.status,
          c.promptTokens,
          c.completionTokens,
          c.latencyMs,
          c.ttftMs,
          c.errorCode,
          c.usageId,
        )
        if (!r) continue
        this.rollups.add({
          at: r.created_at,
          accountId: r.account_id,
          keyId: r.key_id,
          model: r.model,
          surface: r.surface,
          requests: 1,
          promptTokens: c.promptTokens ?? 0,
          completionTokens: c.completionTokens ?? 0,
          errors: c.status >= 400 ? 1 : 0,
          rateLimited: 0,
          latencyMs: c.latencyMs,
        })
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

  /** One chunk of the request log's retention: by age, then by the row bound. */
  pruneLog(p: RetentionPolicy): number {
    const byAge = this.q.pruneOld.run(Math.min(p.logBefore, p.logKeepAfter), p.chunk).changes
    const max = this.q.maxId.get()?.id ?? 0
    const excess = this.q.pruneExcess.run(max - p.logMaxRows, p.logKeepAfter, p.chunk).changes
    return byAge + excess
  }
}
