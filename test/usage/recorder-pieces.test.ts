/**
 * A flush writes its outcomes in pieces and lets the event loop run between them (issue 46). On
 * SQLite the whole batch used to be one synchronous write: the request in flight when the timer
 * fired waited for all of it (up to 3.8 ms at one request at a time, the lane's timeline).
 * Judged by turns, not time: a chain of setImmediate callbacks must run between the pieces, and
 * every outcome must still be written exactly once, its rollups counted once.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { type Completion, openSqliteStore, type Store } from '../../src/store/index.ts'
import { UsageRecorder } from '../../src/usage/recorder.ts'
import { createLogger } from '../../src/util/log.ts'
import { completions } from '../support/admissions.ts'
import { tempDir } from '../support/config-doc.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')
const N = 2_000

/** `n` outcomes for a store stub that only takes the batch's sizes (no ledger fields: `counted` null). */
const uncounted = (n: number): Completion[] =>
  completions(0, n, 'g', T0).map((c) => ({ ...c, counted: null }) as unknown as Completion)

test('a flush of 2,000 outcomes lets the event loop turn between its pieces, and writes each once', async () => {
  const store = openSqliteStore({ path: join(tempDir(), 'db.sqlite'), now: T0 })
  const { id: accountId } = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  // The timer never fires within the test: only the flushes asked for write.
  const recorder = new UsageRecorder(
    store,
    600_000,
    createLogger('error', () => {}),
  )
  const written: number[] = []
  recorder.onWritten = (batch) => written.push(batch.length)
  let turns = 0
  let on = true
  const tick = () => {
    if (!on) return
    turns++
    setImmediate(tick)
  }
  setImmediate(tick)
  for (const c of completions(accountId, N, 'g', T0)) recorder.record(c)
  await recorder.flush()
  on = false
  expect(written.reduce((a, b) => a + b, 0)).toBe(N)
  expect(written.length).toBeGreaterThanOrEqual(4)
  // The loop ran between the pieces (one turn between each; a whole-batch write gave none).
  expect(turns).toBeGreaterThanOrEqual(written.length - 1)
  const rows = store.db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM requests').get()!.n
  expect(rows).toBe(N)
  const summed = store.db
    .query<{ n: number; p: number }, [number]>(
      'SELECT SUM(requests) AS n, SUM(prompt_tokens) AS p FROM usage_hourly WHERE account_id = ?',
    )
    .get(accountId)!
  expect(summed).toEqual({ n: N, p: 10 * N })
  await recorder.close(1_000)
  store.close()
})

test('a large batch goes in four pieces at most, whatever the pace: each piece costs a transaction', async () => {
  // A store whose write holds the loop 25 µs an outcome: paced to PIECE_MS a piece would be 20, and
  // 200 outcomes ten transactions. Measured at c64 without this cap: three times the pieces and
  // 14 µs more of the loop a request (recorder.ts, MAX_PIECES).
  const sizes: number[] = []
  const store = {
    complete(batch: Completion[]) {
      const until = performance.now() + (batch.length * 25) / 1000
      while (performance.now() < until) {
        // the synchronous part of a write
      }
      sizes.push(batch.length)
      return Promise.resolve()
    },
    recordRateLimited: () => Promise.resolve(),
    recordRefusals: () => Promise.resolve(),
  } as unknown as Store
  const recorder = new UsageRecorder(
    store,
    600_000,
    createLogger('error', () => {}),
  )
  for (let round = 0; round < 2; round++) {
    sizes.length = 0
    for (const c of uncounted(200)) recorder.record(c)
    await recorder.flush()
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(200)
    expect(sizes.length).toBeLessThanOrEqual(4)
  }
  await recorder.close(1_000)
})

/**
 * A recorder over a store that writes off the loop and reports its write lock held `msPerOutcome`
 * a written outcome (`usageWriteMs`); `sizes`: the pieces of the last flushes, as written.
 */
function pacedRecorder(msPerOutcome: number): { recorder: UsageRecorder; sizes: number[] } {
  const sizes: number[] = []
  let lastMs: number | null = null
  const store = {
    complete(batch: Completion[]) {
      sizes.push(batch.length)
      lastMs = batch.length * msPerOutcome
      return Promise.resolve()
    },
    usageWriteMs: () => lastMs,
    recordRateLimited: () => Promise.resolve(),
    recordRefusals: () => Promise.resolve(),
  } as unknown as Store
  return {
    recorder: new UsageRecorder(
      store,
      600_000,
      createLogger('error', () => {}),
    ),
    sizes,
  }
}

test('a store that writes off the loop is paced on its write lock: a c64 batch in four pieces, a c=1 batch in one', async () => {
  // A serving SQLite store's writer thread holds the loop for microseconds but the write lock for
  // the transaction (here 25 µs an outcome, as reported by `usageWriteMs`). Paced on the loop, 400
  // outcomes went in one transaction after the first piece: 10 ms an admission may wait for.
  const { recorder, sizes } = pacedRecorder(0.025)
  const record = (n: number) => {
    for (const c of uncounted(n)) recorder.record(c)
  }
  for (let round = 0; round < 2; round++) {
    sizes.length = 0
    record(400)
    await recorder.flush()
    expect(sizes).toEqual([100, 100, 100, 100])
  }
  // 60 outcomes hold the lock 1.5 ms, under LOCK_PIECE_MS: one transaction.
  sizes.length = 0
  record(60)
  await recorder.flush()
  expect(sizes).toEqual([60])
  await recorder.close(1_000)
})

test('off the loop, a batch under LOCK_MIN_PIECE outcomes a piece is one transaction however slowly its lock is held; a c64 batch still four', async () => {
  // 250 µs an outcome: the writer thread's lock on a loaded host (stop 62: ~4 ms for 15 outcomes at
  // load 10). Paced on it alone, a c=1 batch of 60 went in four transactions, each with its fixed
  // part (commit, counters, rollups, pages read again) that an admission meeting the lock waits
  // for: the busy admissions per request about halved with one.
  const { recorder, sizes } = pacedRecorder(0.25)
  const flushed = async (n: number) => {
    sizes.length = 0
    for (const c of uncounted(n)) recorder.record(c)
    await recorder.flush()
    return [...sizes]
  }
  // The first write: no lock time reported yet.
  await flushed(60)
  for (let round = 0; round < 2; round++) expect(await flushed(60)).toEqual([60])
  expect(await flushed(150)).toEqual([150])
  expect(await flushed(400)).toEqual([100, 100, 100, 100])
  await recorder.close(1_000)
})
