/**
 * @module
 * Usage: outcomes of admitted requests, each written in a batch as the request's one log row,
 * and the summaries `/v1/usage` shows.
 * Summaries come from the per-minute counters (`usage_minutes`), never from the log: an
 * account's volume does not change their cost, which is at most a day's minutes per model.
 */
import type { Database } from 'bun:sqlite'
import type { Completion, RetentionPolicy, UsageSummary, UsageTotals } from '../types.ts'
import { minuteOf } from './limiter.ts'
import type { ReserveQueries } from './reserve.ts'
import { emptyFact, type RollupFact, type RollupQueries } from './rollups.ts'

interface TotalsRow {
  requests: number
  prompt_tokens: number | null
  completion_tokens: number | null
  errors: number | null
}

const TOTALS = `SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens,
  SUM(completion_tokens) AS completion_tokens, SUM(errors) AS errors`

const toTotals = (r: TotalsRow | null, estimated = 0): UsageTotals => {
  const prompt = r?.prompt_tokens ?? 0
  const completion = r?.completion_tokens ?? 0
  return {
    requests: r?.requests ?? 0,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    errors: r?.errors ?? 0,
    estimated_requests: estimated,
    cached_tokens: 0,
    cache_write_tokens: 0,
  }
}

interface OutcomeSum {
  accountId: number
  minute: number
  model: string
  prompt: number
  completion: number
  cached: number
  cacheWrite: number
  errors: number
  cost: number
  /** Requests whose tokens are the gateway's settled estimate (Completion.estimated). */
  estimated: number
}

/** A per-minute counter summed per model since the day's start (`?1`) and over the last 24 h (`?2`). */
type SinceSums = { model: string; today: number; last: number }
/** Day start, last 24 h's first minute, account, the earlier of the two (the index's bound). */
type SinceArgs = [number, number, number, number]
const sinceSums = (table: string, column: string) =>
  `SELECT model, SUM(CASE WHEN minute >= ? THEN ${column} ELSE 0 END) AS today,
     SUM(CASE WHEN minute >= ? THEN ${column} ELSE 0 END) AS last
   FROM ${table} WHERE account_id = ? AND minute >= ? GROUP BY model`
const COSTS_SINCE = `${sinceSums('usage_minute_costs', 'cost_micros')} ORDER BY model`
const ESTIMATES_SINCE = sinceSums('usage_minute_estimates', 'requests')
/** The cache's tokens per model since the day's start and over the last 24 h (as `sinceSums`, two columns). */
type CacheSums = { model: string; read: number; written: number; d_read: number; d_written: number }
const CACHE_SINCE = `SELECT model,
    SUM(CASE WHEN minute >= ?1 THEN cached_tokens ELSE 0 END) AS read,
    SUM(CASE WHEN minute >= ?1 THEN cache_write_tokens ELSE 0 END) AS written,
    SUM(CASE WHEN minute >= ?2 THEN cached_tokens ELSE 0 END) AS d_read,
    SUM(CASE WHEN minute >= ?2 THEN cache_write_tokens ELSE 0 END) AS d_written
  FROM usage_minute_cache WHERE account_id = ?3 AND minute >= ?4 GROUP BY model`

export class UsageQueries {
  private readonly q
  private readonly completeTx: (batch: Completion[]) => void
  /**
   * The minute the per-minute counters were last pruned before. Their `minute < ?` deletes scan
   * the tables (no index leads with the minute): with 90 days of 10 (account, model) pairs a
   * minute, a 5,000-row chunk of a log at its bound held the loop and the write lock 136–182 ms
   * (p50) run every chunk, 35–72 ms once a cutoff (three interleaved pairs, load 10–15;
   * scripts/bench/prune-chunk.ts --minutes, BENCHMARKS.md "retention"). Once a cutoff, not once a
   * chunk: every chunk of one retention run has the same cutoff, and no counter is written that
   * far back.
   */
  private countersPrunedTo = Number.NEGATIVE_INFINITY

  constructor(
    private readonly db: Database,
    private readonly rollups: RollupQueries,
    private readonly reserve: ReserveQueries,
  ) {
    this.q = {
      // The request's log row, written once and complete (admission wrote only its counters).
      log: db.query<
        null,
        [
          string,
          string,
          number,
          string,
          string,
          string,
          number,
          number,
          number,
          number | null,
          number | null,
          number,
          number | null,
          string | null,
          number | null,
          number | null,
          string | null,
          number,
        ]
      >(
        `INSERT INTO requests (gateway_id, request_id, account_id, key_id, model, surface, stream, created_at,
           status, prompt_tokens, completion_tokens, latency_ms, ttft_ms, error_code, cost_micros, attempts, answered_by,
           estimated)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      // The request's model has the row (admission counted it in the same minute); a fallback that
      // answered for it may not: its tokens go in a row without requests.
      countOutcome: db.query<null, [number, number, number, number, number, string]>(
        `INSERT INTO usage_minutes (prompt_tokens, completion_tokens, errors, account_id, minute, model)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, minute, model) DO UPDATE SET
           prompt_tokens = prompt_tokens + excluded.prompt_tokens,
           completion_tokens = completion_tokens + excluded.completion_tokens, errors = errors + excluded.errors`,
      ),
      countCost: db.query<null, [number, number, string, number]>(
        `INSERT INTO usage_minute_costs (account_id, minute, model, cost_micros) VALUES (?, ?, ?, ?)
         ON CONFLICT (account_id, minute, model) DO UPDATE SET cost_micros = cost_micros + excluded.cost_micros`,
      ),
      costs: db.query<SinceSums, SinceArgs>(COSTS_SINCE),
      pruneCosts: db.query<null, [number]>('DELETE FROM usage_minute_costs WHERE minute < ?'),
      countEstimated: db.query<null, [number, number, string, number]>(
        `INSERT INTO usage_minute_estimates (account_id, minute, model, requests) VALUES (?, ?, ?, ?)
         ON CONFLICT (account_id, minute, model) DO UPDATE SET requests = requests + excluded.requests`,
      ),
      estimates: db.query<SinceSums, SinceArgs>(ESTIMATES_SINCE),
      countCache: db.query<null, [number, number, string, number, number]>(
        `INSERT INTO usage_minute_cache (account_id, minute, model, cached_tokens, cache_write_tokens)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (account_id, minute, model) DO UPDATE SET
           cached_tokens = cached_tokens + excluded.cached_tokens,
           cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens`,
      ),
      cache: db.query<CacheSums, SinceArgs>(CACHE_SINCE),
      pruneCache: db.query<null, [number]>('DELETE FROM usage_minute_cache WHERE minute < ?'),
      pruneEstimates: db.query<null, [number]>('DELETE FROM usage_minute_estimates WHERE minute < ?'),
      totals: db.query<TotalsRow, [number, number]>(
        `SELECT ${TOTALS} FROM usage_minutes WHERE account_id = ? AND minute >= ?`,
      ),
      byModel: db.query<TotalsRow & { model: string }, [number, number]>(
        `SELECT model, ${TOTALS} FROM usage_minutes WHERE account_id = ? AND minute >= ? GROUP BY model ORDER BY model`,
      ),
      pruneOld: db.query<null, [number, number]>(
        'DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE created_at < ? ORDER BY created_at LIMIT ?)',
      ),
      maxId: db.query<{ id: number | null }, []>('SELECT MAX(id) AS id FROM requests'),
      // ids only grow, so max(id) − log_max_rows bounds the rows kept without counting them.
      pruneExcess: db.query<null, [number, number, number]>(
        'DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE id <= ? AND created_at < ? ORDER BY id LIMIT ?)',
      ),
      pruneCounters: db.query<null, [number]>('DELETE FROM usage_minutes WHERE minute < ?'),
    }
    this.completeTx = db.transaction((batch: Completion[]) => this.completeLocked(batch)).immediate as never
  }

  /** A batch written on this connection, in a write transaction of its own. */
  complete(batch: Completion[]): void {
    if (batch.length) this.completeTx(batch)
  }

  /**
   * A batch written inside the caller's write transaction (the usage thread's `BEGIN IMMEDIATE`).
   * Not `complete` there: a transaction inside another is a SAVEPOINT, whose journal copies every
   * page the batch changes (past 64 KB into a temp file: six calls to make it, then its writes) to
   * undo what the caller's ROLLBACK undoes anyway.
   */
  completeLocked(batch: Completion[]): void {
    if (!batch.length) return
    // Outcomes of one batch mostly share a few (account, minute, model) rows: add them up
    // first, then write each counter row once.
    const sums = new Map<string, OutcomeSum>()
    // The same for the hourly and daily rollups, by (hour, account, key, model, surface).
    const hours = new Map<string, RollupFact>()
    // The batch's settlements (reserve.ts): one statement a charge, then one per scope touched.
    this.reserve.settle(batch.flatMap((c) => (c.settlement ? [c.settlement] : [])))
    for (const c of batch) {
      const at = c.counted
      this.q.log.run(
        c.gatewayId,
        c.requestId,
        at.accountId,
        at.keyId,
        at.model,
        c.surface,
        c.stream ? 1 : 0,
        at.at,
        c.status,
        c.promptTokens,
        c.completionTokens,
        c.latencyMs,
        c.ttftMs,
        c.errorCode,
        c.costMicros ?? null,
        c.attempts ?? null,
        c.answeredBy ?? null,
        c.estimated ? 1 : 0,
      )
      // The request (its count, errors, latency) stays with the model asked for, where admission
      // counted it; its tokens and cost go to the model that answered (DESIGN §11 "One ledger"),
      // a continued stream's first part to the model that produced it.
      const by = c.answeredBy ?? at.model
      const hour = at.at - (at.at % 3_600_000)
      const fact = factOf(hours, hour, at.accountId, at.keyId, at.model, c.surface)
      const paid = by === at.model ? fact : factOf(hours, hour, at.accountId, at.keyId, by, c.surface)
      fact.requests++
      fact.latencyMs += c.latencyMs
      if (c.status >= 400) fact.errors++
      paid.cachedTokens += c.cachedTokens ?? 0
      paid.cacheWriteTokens += c.cacheWriteTokens ?? 0
      const minute = minuteOf(at.at)
      if (c.status >= 400) sumOf(sums, at.accountId, minute, at.model).errors++
      const sum = sumOf(sums, at.accountId, minute, by)
      sum.cached += c.cachedTokens ?? 0
      sum.cacheWrite += c.cacheWriteTokens ?? 0
      if (c.estimated) sum.estimated++
      const f = c.firstPart
      book(
        paid,
        sum,
        (c.promptTokens ?? 0) - (f?.promptTokens ?? 0),
        (c.completionTokens ?? 0) - (f?.completionTokens ?? 0),
        (c.costMicros ?? 0) - (f?.costMicros ?? 0),
      )
      if (f) {
        const began = factOf(hours, hour, at.accountId, at.keyId, f.model, c.surface)
        book(
          began,
          sumOf(sums, at.accountId, minute, f.model),
          f.promptTokens,
          f.completionTokens,
          f.costMicros,
        )
      }
    }
    for (const s of sums.values()) {
      this.q.countOutcome.run(s.prompt, s.completion, s.errors, s.accountId, s.minute, s.model)
      if (s.estimated > 0) this.q.countEstimated.run(s.accountId, s.minute, s.model, s.estimated)
      if (s.cost > 0) this.q.countCost.run(s.accountId, s.minute, s.model, s.cost)
      if (s.cached > 0 || s.cacheWrite > 0)
        this.q.countCache.run(s.accountId, s.minute, s.model, s.cached, s.cacheWrite)
    }
    for (const f of hours.values()) this.rollups.add(f)
  }

  /**
   * Whether `batch` is written: a batch is one transaction, so its first log row tells (found
   * through the (account, time) index). Asked only when a writer thread failed with the batch
   * unanswered.
   */
  written(batch: Completion[]): boolean {
    const c = batch[0]
    if (!c) return true
    const row = this.db
      .query<{ n: number }, [number, number, string]>(
        'SELECT 1 AS n FROM requests WHERE account_id = ? AND created_at = ? AND gateway_id = ? LIMIT 1',
      )
      .get(c.counted.accountId, c.counted.at, c.gatewayId)
    return row !== null
  }

  /** `today` and `by_model` from `dayStart` (a UTC midnight); `last_24h` is the last 1,440 minutes, this one included. */
  usageSummary(accountId: number, now: number, dayStart: number): UsageSummary {
    const today = minuteOf(dayStart)
    const byModel: Record<string, UsageTotals> = {}
    for (const r of this.q.byModel.all(accountId, today)) byModel[r.model] = toTotals(r)
    const last = minuteOf(now) - 1439
    const cost = { today: 0, last_24h: 0, by_model: {} as Record<string, number> }
    for (const c of this.q.costs.all(today, last, accountId, Math.min(today, last))) {
      cost.today += c.today
      cost.last_24h += c.last
      if (c.today > 0) cost.by_model[c.model] = c.today
    }
    // Settled estimates, counted beside the counters (migrations-v16.ts), with the model they belong to.
    const estimated = { today: 0, last: 0 }
    for (const e of this.q.estimates.all(today, last, accountId, Math.min(today, last))) {
      estimated.today += e.today
      estimated.last += e.last
      const m = byModel[e.model]
      if (m) m.estimated_requests = e.today
    }
    const totals = {
      today: toTotals(this.q.totals.get(accountId, today), estimated.today),
      last_24h: toTotals(this.q.totals.get(accountId, last), estimated.last),
    }
    // Prompt-cache reads and writes, counted beside the counters too (migrations-v17.ts).
    for (const c of this.q.cache.all(today, last, accountId, Math.min(today, last))) {
      totals.today.cached_tokens += c.read
      totals.today.cache_write_tokens += c.written
      totals.last_24h.cached_tokens += c.d_read
      totals.last_24h.cache_write_tokens += c.d_written
      const m = byModel[c.model]
      if (m) {
        m.cached_tokens = c.read
        m.cache_write_tokens = c.written
      }
    }
    return { ...totals, by_model: byModel, cost_micros: cost }
  }

  /**
   * One chunk of the request log's retention: by age, then by the row bound. The per-minute
   * counters go by age only, once the log's old rows are gone, once a cutoff.
   */
  pruneLog(p: RetentionPolicy): number {
    const before = Math.min(p.logBefore, p.logKeepAfter)
    const byAge = this.q.pruneOld.run(before, p.chunk).changes
    const cutoff = minuteOf(before)
    // `!==`, not `>`: a clock that jumped ahead and was set back must not stop the pruning.
    if (byAge < p.chunk && cutoff !== this.countersPrunedTo) {
      this.q.pruneCounters.run(cutoff)
      this.q.pruneCosts.run(cutoff)
      this.q.pruneEstimates.run(cutoff)
      this.q.pruneCache.run(cutoff)
      // Marked once all four went: one that threw (SQLITE_BUSY, SQLITE_FULL) is tried again next chunk.
      this.countersPrunedTo = cutoff
    }
    const max = this.q.maxId.get()?.id ?? 0
    const excess = this.q.pruneExcess.run(max - p.logMaxRows, p.logKeepAfter, p.chunk).changes
    return byAge + excess
  }
}

/**
 * The batch's rollup fact of (hour, account, key, model, surface), made empty on first use. Its
 * parts as arguments and get/set, not a key record and a closure: once per outcome, nothing is
 * allocated but the id when the fact is there.
 */
function factOf(
  hours: Map<string, RollupFact>,
  at: number,
  accountId: number,
  keyId: string,
  model: string,
  surface: string,
): RollupFact {
  const id = `${at}\u0000${accountId}\u0000${keyId}\u0000${model}\u0000${surface}`
  let fact = hours.get(id)
  if (fact === undefined) {
    fact = emptyFact({ at, accountId, keyId, model, surface })
    hours.set(id, fact)
  }
  return fact
}

/** The batch's per-minute sum of (account, minute, model), made empty on first use (get/set: no closure per call). */
function sumOf(sums: Map<string, OutcomeSum>, accountId: number, minute: number, model: string): OutcomeSum {
  const id = `${accountId}\u0000${minute}\u0000${model}`
  let sum = sums.get(id)
  if (sum === undefined) {
    sum = {
      accountId,
      minute,
      model,
      prompt: 0,
      completion: 0,
      cached: 0,
      cacheWrite: 0,
      errors: 0,
      cost: 0,
      estimated: 0,
    }
    sums.set(id, sum)
  }
  return sum
}

/** Tokens and cost booked to a model: its hourly rollup fact and its minute's counters. */
function book(fact: RollupFact, sum: OutcomeSum, prompt: number, completion: number, cost: number): void {
  fact.promptTokens += prompt
  fact.completionTokens += completion
  fact.costMicros += cost
  sum.prompt += prompt
  sum.completion += completion
  sum.cost += cost
}
