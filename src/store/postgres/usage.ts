/**
 * @module
 * Usage on PostgreSQL: outcomes written in batches (one statement per batch), the summaries
 * `/v1/usage` shows, retention, and the admission rows a Redis limiter reports.
 */
import type { SQL } from 'bun'
import type { AdmissionLog, AdmitInput, Completion, UsageStore, UsageSummary, UsageTotals } from '../types.ts'
import { num } from './accounts.ts'

const toTotals = (r: Record<string, unknown> | undefined): UsageTotals => {
  const prompt = r ? num(r.prompt_tokens ?? 0) : 0
  const completion = r ? num(r.completion_tokens ?? 0) : 0
  return {
    requests: r ? num(r.requests) : 0,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    errors: r ? num(r.errors ?? 0) : 0,
  }
}

export class PgUsage implements UsageStore, AdmissionLog {
  constructor(private readonly sql: SQL) {}

  async complete(batch: Completion[]): Promise<void> {
    if (!batch.length) return
    // The whole batch as one bound JSON parameter (sent as text: a string bound straight to jsonb
    // would arrive as one JSON string): one statement, one round trip.
    const rows = batch.map((c) => ({
      id: c.usageId,
      status: c.status,
      prompt_tokens: c.promptTokens,
      completion_tokens: c.completionTokens,
      latency_ms: c.latencyMs,
      ttft_ms: c.ttftMs,
      error_code: c.errorCode,
      surface: c.surface ?? null,
    }))
    // The outcomes and their hourly and daily rollups in one statement (data-modifying CTEs).
    await this.sql`
      WITH u AS (
        UPDATE requests r SET status = v.status, prompt_tokens = v.prompt_tokens,
          completion_tokens = v.completion_tokens, latency_ms = v.latency_ms, ttft_ms = v.ttft_ms,
          error_code = v.error_code, surface = COALESCE(v.surface, r.surface)
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) AS v(id BIGINT, status INTEGER,
          prompt_tokens INTEGER, completion_tokens INTEGER, latency_ms INTEGER, ttft_ms INTEGER, error_code TEXT,
          surface TEXT)
        WHERE r.id = v.id
        RETURNING r.created_at AS at, r.account_id, r.key_id, r.model, r.surface, v.status,
          COALESCE(v.prompt_tokens, 0) AS p, COALESCE(v.completion_tokens, 0) AS c, v.latency_ms AS l),
      h AS (INSERT INTO usage_hourly AS x (t, account_id, key_id, model, surface, requests, prompt_tokens,
          completion_tokens, errors, latency_ms_sum)
        SELECT at - at % 3600000, account_id, key_id, model, surface, COUNT(*), SUM(p), SUM(c),
          COUNT(*) FILTER (WHERE status >= 400), SUM(l) FROM u GROUP BY 1, 2, 3, 4, 5
        ON CONFLICT (t, account_id, key_id, model, surface) DO UPDATE SET requests = x.requests + excluded.requests,
          prompt_tokens = x.prompt_tokens + excluded.prompt_tokens,
          completion_tokens = x.completion_tokens + excluded.completion_tokens,
          errors = x.errors + excluded.errors, latency_ms_sum = x.latency_ms_sum + excluded.latency_ms_sum)
      INSERT INTO usage_daily AS x (t, account_id, key_id, model, surface, requests, prompt_tokens,
          completion_tokens, errors, latency_ms_sum)
        SELECT at - at % 86400000, account_id, key_id, model, surface, COUNT(*), SUM(p), SUM(c),
          COUNT(*) FILTER (WHERE status >= 400), SUM(l) FROM u GROUP BY 1, 2, 3, 4, 5
        ON CONFLICT (t, account_id, key_id, model, surface) DO UPDATE SET requests = x.requests + excluded.requests,
          prompt_tokens = x.prompt_tokens + excluded.prompt_tokens,
          completion_tokens = x.completion_tokens + excluded.completion_tokens,
          errors = x.errors + excluded.errors, latency_ms_sum = x.latency_ms_sum + excluded.latency_ms_sum`
  }

  async usageSummary(accountId: number, now: number, dayStart: number): Promise<UsageSummary> {
    const since24h = now - 86_400_000 + 1
    const [today, last24h, models] = await Promise.all([
      this.totals(accountId, dayStart),
      this.totals(accountId, since24h),
      this.sql`
        SELECT model, COUNT(*) AS requests, SUM(prompt_tokens) AS prompt_tokens,
          SUM(completion_tokens) AS completion_tokens, COUNT(*) FILTER (WHERE status >= 400) AS errors
        FROM requests WHERE account_id = ${accountId} AND created_at >= ${dayStart}
        GROUP BY model ORDER BY model`,
    ])
    const byModel: Record<string, UsageTotals> = {}
    for (const r of models) byModel[r.model as string] = toTotals(r)
    return { today, last_24h: last24h, by_model: byModel }
  }

  async recordAdmitted(input: AdmitInput, at: number): Promise<number> {
    const [r] = await this.sql`
      INSERT INTO requests (request_id, account_id, key_id, model, surface, stream, created_at)
      VALUES (${input.requestId}, ${input.accountId}, ${input.keyId}, ${input.model}, ${input.surface ?? 'chat'}, ${input.stream}, ${at})
      RETURNING id`
    return num(r.id)
  }

  async countSince(accountId: number, since: number): Promise<number> {
    const [r] = await this.sql`
      SELECT COUNT(*) AS n FROM requests WHERE account_id = ${accountId} AND created_at > ${since}`
    return num(r.n)
  }

  close(): void {}

  private async totals(accountId: number, since: number): Promise<UsageTotals> {
    const [r] = await this.sql`
      SELECT COUNT(*) AS requests, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens,
        COUNT(*) FILTER (WHERE status >= 400) AS errors
      FROM requests WHERE account_id = ${accountId} AND created_at >= ${since}`
    return toTotals(r)
  }
}
