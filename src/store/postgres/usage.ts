/**
 * @module
 * Usage on PostgreSQL: outcomes written in batches (one statement per batch), the summaries
 * `/v1/usage` shows, retention, and the admission rows a Redis limiter reports.
 */
import type { SQL } from 'bun'
import type { Settlement } from '../../limits/types.ts'
import { num } from '../account-rows.ts'
import type {
  AdmissionLog,
  AdmitInput,
  ChargeHistory,
  ChargeHistoryQuery,
  Completion,
  UsageStore,
  UsageSummary,
  UsageTotals,
} from '../types.ts'
import type { PgBound } from './bounded.ts'
import { tokensQuery } from './charges.ts'
import { rollupOf } from './rollups.ts'

const toTotals = (r: Record<string, unknown> | undefined): UsageTotals => {
  const prompt = r ? num(r.prompt_tokens ?? 0) : 0
  const completion = r ? num(r.completion_tokens ?? 0) : 0
  return {
    requests: r ? num(r.requests ?? 0) : 0,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    errors: r ? num(r.errors ?? 0) : 0,
    estimated_requests: r ? num(r.estimated ?? 0) : 0,
    cached_tokens: r ? num(r.cached_tokens ?? 0) : 0,
    cache_write_tokens: r ? num(r.cache_write_tokens ?? 0) : 0,
  }
}

export class PgUsage implements UsageStore, AdmissionLog {
  constructor(private readonly db: PgBound) {}

  async complete(batch: Completion[]): Promise<void> {
    if (!batch.length) return
    // The whole batch as one bound JSON parameter (sent as text: a string bound straight to jsonb
    // would arrive as one JSON string): one statement, one round trip.
    const rows = batch.map((c) => ({
      id: c.gatewayId,
      status: c.status,
      prompt_tokens: c.promptTokens,
      completion_tokens: c.completionTokens,
      cached_tokens: c.cachedTokens ?? 0,
      cache_write_tokens: c.cacheWriteTokens ?? 0,
      latency_ms: c.latencyMs,
      ttft_ms: c.ttftMs,
      error_code: c.errorCode,
      surface: c.surface ?? null,
      cost_micros: c.costMicros ?? null,
      attempts: c.attempts ?? null,
      answered_by: c.answeredBy ?? null,
      estimated: c.estimated === true,
      first_model: c.firstPart?.model ?? null,
      first_p: c.firstPart?.promptTokens ?? 0,
      first_c: c.firstPart?.completionTokens ?? 0,
      first_m: c.firstPart?.costMicros ?? 0,
    }))
    const settle = batch.flatMap((c) =>
      c.settlement
        ? [{ id: c.settlement.handle as string, tokens: c.settlement.tokens, micros: c.settlement.micros }]
        : [],
    )
    // Reservations settle in the outcomes' transaction (switchyard_settle, migrations-v12.ts).
    // Both are idempotent (an outcome is written once, a reservation settled once), so a batch
    // that committed after its deadline and is retried counts once.
    await this.db.run(async (sql) => {
      if (settle.length)
        await sql.begin(async (tx) => {
          await tx`SELECT switchyard_settle(${JSON.stringify(settle)}::text::jsonb)`
          await writeOutcomes(tx, rows)
        })
      else await writeOutcomes(sql, rows)
    })
  }

  /**
   * From the per-minute counters (migrations-v6.ts), one statement: at most a day's minutes per
   * model whatever the account's volume. `today` and `by_model` from `dayStart` (a UTC midnight);
   * `last_24h` is the last 1,440 whole minutes, this one included (as on SQLite).
   */
  async usageSummary(accountId: number, now: number, dayStart: number): Promise<UsageSummary> {
    const today = Math.floor(dayStart / 60_000)
    const last = Math.floor(now / 60_000) - 1439
    const rows = await this.db.run(
      (sql) => sql`
      WITH c AS (
        SELECT model, minute, requests, 0 AS p, 0 AS c, 0 AS e, 0 AS m, 0 AS s, 0 AS k, 0 AS w FROM usage_minutes
          WHERE account_id = ${accountId} AND minute >= LEAST(${today}::BIGINT, ${last}::BIGINT)
        UNION ALL
        SELECT model, minute, 0, prompt_tokens, completion_tokens, errors, cost_micros, estimated, cached_tokens,
          cache_write_tokens FROM usage_minute_outcomes
          WHERE account_id = ${accountId} AND minute >= LEAST(${today}::BIGINT, ${last}::BIGINT))
      SELECT model,
        SUM(requests) FILTER (WHERE minute >= ${today}) AS requests,
        SUM(p) FILTER (WHERE minute >= ${today}) AS prompt_tokens,
        SUM(c) FILTER (WHERE minute >= ${today}) AS completion_tokens,
        SUM(e) FILTER (WHERE minute >= ${today}) AS errors,
        SUM(s) FILTER (WHERE minute >= ${today}) AS estimated,
        SUM(k) FILTER (WHERE minute >= ${today}) AS cached_tokens,
        SUM(w) FILTER (WHERE minute >= ${today}) AS cache_write_tokens,
        SUM(requests) FILTER (WHERE minute >= ${last}) AS d_requests,
        SUM(p) FILTER (WHERE minute >= ${last}) AS d_prompt_tokens,
        SUM(c) FILTER (WHERE minute >= ${last}) AS d_completion_tokens,
        SUM(e) FILTER (WHERE minute >= ${last}) AS d_errors,
        SUM(s) FILTER (WHERE minute >= ${last}) AS d_estimated,
        SUM(k) FILTER (WHERE minute >= ${last}) AS d_cached_tokens,
        SUM(w) FILTER (WHERE minute >= ${last}) AS d_cache_write_tokens,
        SUM(m) FILTER (WHERE minute >= ${today}) AS cost,
        SUM(m) FILTER (WHERE minute >= ${last}) AS d_cost
      FROM c GROUP BY model ORDER BY model`,
    )
    const byModel: Record<string, UsageTotals> = {}
    const sum = (a: UsageTotals, b: UsageTotals): UsageTotals => ({
      requests: a.requests + b.requests,
      prompt_tokens: a.prompt_tokens + b.prompt_tokens,
      completion_tokens: a.completion_tokens + b.completion_tokens,
      total_tokens: a.total_tokens + b.total_tokens,
      errors: a.errors + b.errors,
      estimated_requests: a.estimated_requests + b.estimated_requests,
      cached_tokens: a.cached_tokens + b.cached_tokens,
      cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
    })
    let todayTotals = toTotals(undefined)
    let dayTotals = toTotals(undefined)
    const cost = { today: 0, last_24h: 0, by_model: {} as Record<string, number> }
    for (const r of rows) {
      const t = toTotals(r)
      cost.today += num(r.cost ?? 0)
      cost.last_24h += num(r.d_cost ?? 0)
      // A model that only answered for others (a fallback) has tokens and cost but no requests.
      if (t.requests > 0 || t.total_tokens > 0 || num(r.cost ?? 0) > 0) {
        byModel[r.model as string] = t
        cost.by_model[r.model as string] = num(r.cost ?? 0)
      }
      todayTotals = sum(todayTotals, t)
      dayTotals = sum(
        dayTotals,
        toTotals({
          requests: r.d_requests,
          prompt_tokens: r.d_prompt_tokens,
          completion_tokens: r.d_completion_tokens,
          errors: r.d_errors,
          estimated: r.d_estimated,
          cached_tokens: r.d_cached_tokens,
          cache_write_tokens: r.d_cache_write_tokens,
        }),
      )
    }
    return { today: todayTotals, last_24h: dayTotals, by_model: byModel, cost_micros: cost }
  }

  /**
   * `settled` is false while a reservation made in Redis awaits its settlement (the sweeper reads
   * it); `tokens` and `charge_micros` hold what it reserved until then, so a Redis that lost its
   * state is rebuilt from these rows (redis/rebuild.ts).
   */
  async recordAdmitted(
    input: AdmitInput,
    at: number,
    reserved?: { tokens: number; micros: number },
  ): Promise<void> {
    const settled = !input.charge?.rows.some((r) => r.resource !== 'requests')
    await this.db.run(
      (sql) => sql`
      INSERT INTO requests (gateway_id, request_id, account_id, key_id, model, surface, stream, created_at, settled,
        tokens, charge_micros)
      VALUES (${input.gatewayId}, ${input.requestId}, ${input.accountId}, ${input.keyId}, ${input.model},
        ${input.surface ?? 'chat'}, ${input.stream}, ${at}, ${settled}, ${reserved?.tokens ?? 0},
        ${reserved?.micros ?? 0})`,
    )
  }

  /** A Redis reservation grew (`Limiter.extend`): its row holds what it holds now, for a rebuild. */
  async recordGrowth(gatewayId: string, tokens: number, micros: number): Promise<void> {
    await this.db.run(
      (sql) => sql`
      UPDATE requests SET tokens = tokens + ${tokens}::BIGINT, charge_micros = charge_micros + ${micros}::BIGINT
      WHERE gateway_id = ${gatewayId} AND NOT settled`,
    )
  }

  async tokensSince(accountId: number, keyId: string | null, since: number) {
    const [r] = await this.db.run((sql) => tokensQuery(sql, accountId, keyId, since))
    return { used: num(r?.n ?? 0), first: r?.first == null ? null : num(r.first) }
  }

  /** Four index range reads on (account_id, created_at): at most a month of the account's rows. */
  async chargeHistory(q: ChargeHistoryQuery): Promise<ChargeHistory> {
    const { accountId: a, now } = q
    const [log, buckets, spend, open] = await this.db.run((sql) =>
      Promise.all([
        q.logLimit > 0
          ? sql`SELECT created_at FROM requests WHERE account_id = ${a} AND created_at > ${q.logSince}
            ORDER BY created_at DESC LIMIT ${q.logLimit}`
          : [],
        sql`
        SELECT key_id, 'minute' AS w, MAX(created_at) AS at, COUNT(*) AS n,
          COALESCE(SUM(tokens) FILTER (WHERE settled), 0) AS t
        FROM requests WHERE account_id = ${a} AND created_at > ${now - q.minuteMs}
        GROUP BY key_id, created_at / ${q.minuteBucketMs}
        UNION ALL
        SELECT key_id, 'day', MAX(created_at), COUNT(*), COALESCE(SUM(tokens) FILTER (WHERE settled), 0)
        FROM requests WHERE account_id = ${a} AND created_at > ${now - q.dayMs}
        GROUP BY key_id, created_at / ${q.dayBucketMs}`,
        sql`
        SELECT key_id,
          COALESCE(SUM(charge_micros) FILTER (WHERE created_at >= ${q.periods.day}), 0) AS d,
          COALESCE(SUM(charge_micros) FILTER (WHERE created_at >= ${q.periods.week}), 0) AS w,
          COALESCE(SUM(charge_micros) FILTER (WHERE created_at >= ${q.periods.month}), 0) AS m
        FROM requests WHERE account_id = ${a} AND charge_micros > 0
          AND created_at >= ${Math.min(q.periods.day, q.periods.week, q.periods.month)}
        GROUP BY key_id`,
        sql`
        SELECT gateway_id, key_id, created_at, tokens, charge_micros FROM requests
        WHERE account_id = ${a} AND NOT settled AND created_at > ${now - 2 * q.dayMs}`,
      ]),
    )
    return {
      log: (log as Array<Record<string, unknown>>).map((r) => num(r.created_at)).reverse(),
      buckets: buckets.map((r: Record<string, unknown>) => ({
        keyId: String(r.key_id),
        window: r.w as 'minute' | 'day',
        at: num(r.at),
        requests: num(r.n),
        tokens: num(r.t),
      })),
      spend: spend.flatMap((r: Record<string, unknown>) =>
        (['day', 'week', 'month'] as const).map((period) => ({
          keyId: String(r.key_id),
          period,
          micros: num(r[period[0]!] ?? 0),
        })),
      ),
      open: open.map((r: Record<string, unknown>) => ({
        handle: String(r.gateway_id),
        keyId: String(r.key_id),
        at: num(r.created_at),
        tokens: num(r.tokens),
        micros: num(r.charge_micros),
      })),
    }
  }

  async admissionsByHandle(handles: string[]) {
    const out = new Map<string, { settled: boolean; tokens: number; micros: number }>()
    if (!handles.length) return out
    const rows = await this.db.run(
      (sql) => sql`
      SELECT gateway_id, settled, tokens, charge_micros FROM requests
      WHERE gateway_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(handles)}::text::jsonb))`,
    )
    for (const r of rows)
      out.set(String(r.gateway_id), {
        settled: Boolean(r.settled),
        tokens: num(r.tokens),
        micros: num(r.charge_micros),
      })
    return out
  }

  async unsettled(before: number, limit: number): Promise<Array<{ gatewayId: string; accountId: number }>> {
    const rows = await this.db.run(
      (sql) => sql`
      SELECT gateway_id, account_id FROM requests WHERE NOT settled AND created_at < ${before}
      ORDER BY created_at LIMIT ${limit}`,
    )
    return rows.map((r: Record<string, unknown>) => ({
      gatewayId: String(r.gateway_id),
      accountId: num(r.account_id),
    }))
  }

  async markSettled(items: Settlement[]): Promise<string[]> {
    const ids = items.map((s) => s.handle as string)
    const rows = await this.db.run(
      (sql) => sql`
      UPDATE requests SET settled = TRUE
      WHERE gateway_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::text::jsonb))
        AND NOT settled
      RETURNING gateway_id`,
    )
    return rows.map((r: Record<string, unknown>) => String(r.gateway_id))
  }

  async countSince(accountId: number, since: number): Promise<number> {
    const [r] = await this.db.run(
      (sql) => sql`
      SELECT COUNT(*) AS n FROM requests WHERE account_id = ${accountId} AND created_at > ${since}`,
    )
    return num(r.n)
  }

  close(): void {}
}

/**
 * The outcomes and their counters. Tokens and cost go to the model that answered (`answered_by`,
 * a fallback, else the one asked for: DESIGN §11 "One ledger"); the request itself, its errors
 * and latency stay with the model asked for, where admission counted it.
 */
async function writeOutcomes(sql: SQL, rows: Array<Record<string, unknown>>): Promise<void> {
  // The outcomes and their hourly and daily rollups in one statement (data-modifying CTEs).
  await sql`
    WITH u AS (
      UPDATE requests r SET status = v.status, prompt_tokens = v.prompt_tokens,
        completion_tokens = v.completion_tokens, latency_ms = v.latency_ms, ttft_ms = v.ttft_ms,
        error_code = v.error_code, surface = COALESCE(v.surface, r.surface), cost_micros = v.cost_micros,
        attempts = v.attempts, answered_by = v.answered_by, estimated = v.estimated
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) AS v(id TEXT, status INTEGER,
        prompt_tokens INTEGER, completion_tokens INTEGER, latency_ms INTEGER, ttft_ms INTEGER, error_code TEXT,
        surface TEXT, cost_micros BIGINT, attempts INTEGER, answered_by TEXT, estimated BOOLEAN,
        cached_tokens INTEGER, cache_write_tokens INTEGER, first_model TEXT, first_p INTEGER,
        first_c INTEGER, first_m BIGINT)
      -- Written once: an outcome already recorded is not counted again.
      WHERE r.gateway_id = v.id AND r.status IS NULL
      RETURNING r.created_at AS at, r.account_id, r.key_id, r.model, r.surface, v.status,
        COALESCE(v.prompt_tokens, 0) - v.first_p AS p, COALESCE(v.completion_tokens, 0) - v.first_c AS c,
        v.latency_ms AS l, COALESCE(v.cost_micros, 0) - v.first_m AS m, COALESCE(v.answered_by, r.model) AS am,
        v.estimated::INT AS s, COALESCE(v.cached_tokens, 0) AS k, COALESCE(v.cache_write_tokens, 0) AS w,
        v.first_model AS fm, v.first_p AS fp, v.first_c AS fc, v.first_m AS fmm),
    -- Each outcome as its request's part (model asked for) and its tokens' and cost's (model that
    -- answered): one row when they are the same model; a continued stream's first part (fm) a row
    -- of its own, under the model that produced it.
    f AS (
      SELECT at, account_id, key_id, model, surface, 1 AS n, CASE WHEN am = model THEN p ELSE 0 END AS p,
        CASE WHEN am = model THEN c ELSE 0 END AS c, (status >= 400)::INT AS e, 0 AS r, l,
        CASE WHEN am = model THEN m ELSE 0 END AS m, CASE WHEN am = model THEN s ELSE 0 END AS s,
        CASE WHEN am = model THEN k ELSE 0 END AS k, CASE WHEN am = model THEN w ELSE 0 END AS w FROM u
      UNION ALL
      SELECT at, account_id, key_id, am, surface, 0, p, c, 0, 0, 0, m, s, k, w FROM u WHERE am <> model
      UNION ALL
      SELECT at, account_id, key_id, fm, surface, 0, fp, fc, 0, 0, 0, fmm, 0, 0, 0 FROM u WHERE fm IS NOT NULL),
    h AS (${rollupOf(sql, 'hour')}),
    -- In key order, so concurrent batches lock counter rows in one order (migrations-v6.ts).
    m AS (INSERT INTO usage_minute_outcomes AS x (account_id, minute, model, prompt_tokens,
        completion_tokens, errors, cost_micros, estimated, cached_tokens, cache_write_tokens)
      SELECT account_id, at / 60000, model, SUM(p), SUM(c), SUM(e), SUM(m), SUM(s), SUM(k), SUM(w)
      FROM f GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
      ON CONFLICT (account_id, minute, model) DO UPDATE SET cost_micros = x.cost_micros + excluded.cost_micros,
        estimated = x.estimated + excluded.estimated,
        cached_tokens = x.cached_tokens + excluded.cached_tokens,
        cache_write_tokens = x.cache_write_tokens + excluded.cache_write_tokens,
        prompt_tokens = x.prompt_tokens + excluded.prompt_tokens,
        completion_tokens = x.completion_tokens + excluded.completion_tokens,
        errors = x.errors + excluded.errors)
    ${rollupOf(sql, 'day')}`
}
