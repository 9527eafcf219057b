/**
 * @module
 * Retention: every hour the request log loses rows older than `usage.retention_days` and rows
 * beyond `usage.log_max_rows` (never those the limiter's day window still reads, nor — with
 * Redis — the charged rows of the current budget periods, which Redis is rebuilt from), and the rollups
 * lose hours and days past their own retention. Deleted in chunks with a pause between, so the
 * write lock is never held for long and admissions keep flowing.
 */
import type { Config } from '../config/index.ts'
import { periodBounds } from '../limits/rows.ts'
import type { RetentionPolicy, Store } from '../store/index.ts'
import { DAY_MS } from '../util/clock.ts'

const CHUNK = 5000
const PAUSE_MS = 20

export function retentionPolicy(config: Config, now: number): RetentionPolicy {
  const keepAfter = now - config.windows.dayMs
  // With Redis, PostgreSQL's charged rows are the only record of the current budget periods'
  // spend that survives Redis's loss: none of them goes before its period (a month at most) ends.
  const charges = config.limiter.redisUrl
    ? Math.min(keepAfter, periodBounds('month', now).start, periodBounds('week', now).start)
    : undefined
  return {
    logBefore: now - config.usage.retentionDays * DAY_MS,
    logMaxRows: config.usage.logMaxRows,
    logKeepAfter: keepAfter,
    ...(charges === undefined ? {} : { chargesKeepAfter: charges }),
    hourlyBefore: now - config.usage.hourlyRetentionDays * DAY_MS,
    dailyBefore: now - config.usage.dailyRetentionDays * DAY_MS,
    chunk: CHUNK,
  }
}

/** Prunes until nothing is left to prune; resolves to the number of rows deleted. */
export async function pruneAll(store: Store, policy: RetentionPolicy, signal?: AbortSignal): Promise<number> {
  let total = 0
  for (;;) {
    if (signal?.aborted) return total
    const n = await store.pruneHistory(policy)
    total += n
    if (n === 0) return total
    await Bun.sleep(PAUSE_MS)
  }
}
