/**
 * @module
 * Retention's hourly prune (src/usage/retention.ts) on the event loop, one chunk at a time: a
 * store's request log filled with `--rows` synthetic rows (request-log-seed.ts), then pruned to
 * `--keep` rows by `log_max_rows` as a serving gateway at its bound does every hour, in chunks of
 * `--chunk` rows (retention's CHUNK). Per chunk: the ms the call held the loop (and the write
 * lock), the µs a row. At the bound a gateway deletes each hour what it logged that hour: a loop
 * serving R requests a second is held R × (µs a row) of every second by the prune, in pieces of
 * one chunk each — what a request that meets one waits.
 *
 * `--root DIR`: another checkout's store (its src/store/index.ts), e.g. main's, to set beside.
 * The store serves as `serve` opens it (its checkpoint and writer threads), so no checkpoint runs
 * in the timed calls' commits.
 *
 * `--minutes N`: the per-minute counters hold N (account, model) pairs a minute over the last 90
 * days (retention's default), as a gateway's do (usage_minutes; 0: empty).
 *
 * bun scripts/bench/prune-chunk.ts [--rows N] [--keep N] [--chunk N] [--minutes N] [--root DIR]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedRequestLog } from './request-log-seed.ts'
import { quantile, sortedCopy } from './workload.ts'

const argv = process.argv.slice(2)
const arg = (name: string, d: number) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv[i + 1]) : d
}
const ROWS = arg('--rows', 200_000)
const KEEP = arg('--keep', 100_000)
const CHUNK = arg('--chunk', 5000)
const PAIRS = arg('--minutes', 0)
const HOUR = 3_600_000
const rootAt = argv.indexOf('--root')
const root = rootAt >= 0 ? argv[rootAt + 1]! : join(import.meta.dir, '..', '..')
const { openSqliteStore } = (await import(
  join(root, 'src', 'store', 'index.ts')
)) as typeof import('../../src/store/index.ts')
const dir = mkdtempSync(join(tmpdir(), 'prune-chunk-'))
try {
  const end = Date.now()
  const store = openSqliteStore({ path: join(dir, 'prune.db'), now: end, checkpointInThread: true })
  seedRequestLog(store.db, ROWS, end - 2 * HOUR, 48 * HOUR)
  const MINUTE = 60_000
  const last = Math.floor(end / MINUTE)
  store.db.transaction(() => {
    const add = store.db.query<null, [number, number, string]>(
      'INSERT OR IGNORE INTO usage_minutes (account_id, minute, model, requests) VALUES (?, ?, ?, 1)',
    )
    for (let m = last - 90 * 1440; PAIRS > 0 && m < last; m++)
      for (let k = 0; k < PAIRS; k++) add.run(1 + (k % 5), m, `model-${k}`)
  })()
  const policy = {
    // By age: 90 days (retention's default), which leaves every seeded row to the bound.
    logBefore: end - 90 * 24 * HOUR,
    logMaxRows: KEEP,
    // Every seeded row is older than the limiter's day window would keep here.
    logKeepAfter: end,
    hourlyBefore: 0,
    dailyBefore: 0,
    chunk: CHUNK,
  }
  const ms: number[] = []
  let rows = 0
  for (;;) {
    const t0 = performance.now()
    const n = await store.pruneHistory(policy)
    if (n === 0) break
    ms.push(performance.now() - t0)
    rows += n
  }
  const s = sortedCopy(ms)
  const total = ms.reduce((a, b) => a + b, 0)
  console.log(
    `${rootAt >= 0 ? root : 'this checkout'}: ${ROWS} rows${PAIRS ? ` (counters: ${PAIRS} pairs a minute, 90 days)` : ''} pruned to ${KEEP} in chunks of ${CHUNK}: ${ms.length} chunks, ${rows} rows; a chunk p50 ${quantile(s, 0.5).toFixed(1)} ms, max ${(s.at(-1) ?? 0).toFixed(1)} ms; ${((total * 1000) / Math.max(1, rows)).toFixed(1)} µs a row`,
  )
  await store.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
