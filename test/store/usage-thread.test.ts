/**
 * A serving store writes the usage flush on a thread of its own (issue 46, sixth pass): on the
 * event loop a flush piece held the loop 0.6–0.8 ms at one request at a time, the lane's p99.
 * The thread's connection writes the same one transaction a batch; a lock held elsewhere is still
 * waited out up to the store's bound and then `StoreBusyError` (the recorder puts the batch back),
 * and an admission that met the thread's lock is retried as soon as the thread has committed.
 */
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { openSqliteStore, type SqliteStore, StoreBusyError } from '../../src/store/index.ts'
import { SqliteLimiter } from '../../src/store/sqlite/admissions.ts'
import { SqliteGuard } from '../../src/store/sqlite/guard.ts'
import { admission, completions } from '../support/admissions.ts'
import { tempDir } from '../support/config-doc.ts'
import { databaseConnections } from '../support/process.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')

async function until(ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!ok() && Date.now() < deadline) await Bun.sleep(10)
}

const batchOf = (accountId: number, n: number, tag: string) => completions(accountId, n, tag, T0)

const changesOf = (store: SqliteStore) =>
  (store.db.query('SELECT total_changes() AS n').get() as { n: number }).n

async function serving(
  path: string,
  busyTimeoutMs?: number,
  errors: unknown[] = [],
): Promise<{ store: SqliteStore; accountId: number }> {
  const store = openSqliteStore({
    path,
    now: T0,
    checkpointInThread: true,
    busyTimeoutMs,
    error: (message, fields) => errors.push({ message, ...fields }),
  })
  const { id } = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  // The loop's, the checkpoint thread's and the usage writer's: the writer has opened its own.
  await until(() => databaseConnections(process.pid, path) === 3)
  // Until the writer has said it runs, a batch is written on the loop's connection as before.
  await until(() => store.usageWriter!.running)
  return { store, accountId: id }
}

test("a serving store's usage flush is written by its writer thread's connection, not the event loop's", async () => {
  const path = join(tempDir(), 'db.sqlite')
  const { store, accountId } = await serving(path)
  try {
    expect(databaseConnections(process.pid, path)).toBe(3)
    const before = changesOf(store)
    await store.complete(batchOf(accountId, 500, 'g'))
    expect(store.usageWriteMs!()).not.toBeNull()
    // Every row is there (read on the loop's connection), and that connection changed none.
    expect(store.db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 500 })
    const minute = store.db.query('SELECT prompt_tokens AS p FROM usage_minutes').get() as { p: number }
    expect(minute.p).toBe(5_000)
    expect(changesOf(store) - before).toBe(0)
  } finally {
    await store.close()
  }
})

/** Counts the thread's answers (each write it ended, written or not). */
function answers(store: SqliteStore): { n: number } {
  const count = { n: 0 }
  const writer = store.usageWriter!
  const was = writer.onDone
  writer.onDone = () => {
    count.n++
    was?.()
  }
  return count
}

test("the writer thread waits for another connection's lock up to the store's bound, then StoreBusyError; nothing half-written", async () => {
  const path = join(tempDir(), 'db.sqlite')
  const { store, accountId } = await serving(path, 300)
  const other = new Database(path)
  const thread = answers(store)
  try {
    other.run('BEGIN IMMEDIATE')
    const err = await store.complete(batchOf(accountId, 50, 'b')).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(StoreBusyError)
    // The thread waited and answered it (on the loop the guard would have).
    expect(thread.n).toBe(1)
    other.run('COMMIT')
    expect(store.db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 0 })
    // Put back and written again (the recorder's retry), it is written once, by the thread.
    await store.complete(batchOf(accountId, 50, 'b'))
    expect(thread.n).toBe(2)
    expect(store.db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 50 })
  } finally {
    other.close()
    await store.close()
  }
})

test('a batch the thread fails part-way is rolled back whole: no log row, counter or rollup of it stays', async () => {
  // The thread's own ROLLBACK is what undoes it (the batch is written in its transaction, not a
  // savepoint of its own): a COMMIT there would keep the five rows written before the failure.
  const path = join(tempDir(), 'db.sqlite')
  const { store, accountId } = await serving(path)
  try {
    const batch = batchOf(accountId, 10, 'r')
    ;(batch[5] as { requestId: string | null }).requestId = null
    const err = await store.complete(batch).catch((e: unknown) => e)
    expect(String(err)).toContain('NOT NULL')
    for (const table of ['requests', 'usage_minutes', 'usage_hourly', 'usage_daily'])
      expect([table, store.db.query(`SELECT COUNT(*) AS n FROM ${table}`).get()]).toEqual([table, { n: 0 }])
    // The thread still writes the next batch.
    await store.complete(batchOf(accountId, 10, 's'))
    expect(store.db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 10 })
  } finally {
    await store.close()
  }
})

test("the store's close ends the writer's and the checkpointer's connections in turn and resolves after: no handle left, the WAL gone", async () => {
  const path = join(tempDir(), 'db.sqlite')
  const { store, accountId } = await serving(path)
  await store.complete(batchOf(accountId, 100, 'c'))
  await store.close()
  // Resolved, not waited for: serve exits right after it.
  expect(databaseConnections(process.pid, path)).toBe(0)
  expect(existsSync(`${path}-wal`)).toBe(false)
})

test("an admission that met the lock is retried when the writer thread says it committed, not at its timer's ≥ 1 ms", async () => {
  const path = join(tempDir(), 'db.sqlite')
  const store = openSqliteStore({ path, now: T0 })
  const { id } = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  const limiter = new SqliteLimiter(store.db, new SqliteGuard(path, 5_000))
  const other = new Database(path)
  try {
    other.run('BEGIN IMMEDIATE')
    let admitted = false
    const pending = limiter.admit(admission(id, T0)).then((r) => {
      admitted = r.admitted
    })
    // The group commit's turn runs first and finds the lock taken: the batch waits on a timer.
    await new Promise((r) => setImmediate(r))
    other.run('COMMIT')
    limiter.lockFreed()
    // Microtasks only: no timer has had its turn, so only the wake-up can have admitted it.
    for (let i = 0; i < 3; i++) await Promise.resolve()
    expect(admitted).toBe(true)
    await pending
  } finally {
    other.close()
    store.close()
  }
})

/** Waits until some connection holds the database's write lock (a probe cannot take it). */
async function lockTaken(probe: Database): Promise<void> {
  await until(() => {
    try {
      probe.run('BEGIN IMMEDIATE')
      probe.run('ROLLBACK')
      return false
    } catch {
      return true
    }
  })
}

test("through the serving store: an admission that met the writer thread's lock is admitted on the thread's commit, not at its timer", async () => {
  const path = join(tempDir(), 'db.sqlite')
  const { store, accountId } = await serving(path)
  const probe = new Database(path)
  probe.run('PRAGMA busy_timeout = 0')
  // The limiter's retry timers pushed a minute away while this runs: on a loaded machine the
  // thread's answer can reach the loop ms after its commit, and a timer turn between would admit
  // it either way. Only the wake-up on the thread's answer can admit it here.
  const realSetTimeout = globalThis.setTimeout
  globalThis.setTimeout = ((fn: () => void) => realSetTimeout(fn, 60_000)) as typeof setTimeout
  try {
    // Long enough (tens of ms) that the admission meets it.
    const write = store.complete(batchOf(accountId, 20_000, 'L'))
    await lockTaken(probe)
    let admitted = false
    const admitting = store.admit(admission(accountId, T0)).then((r) => {
      admitted = r.admitted
    })
    // Whether it was admitted when the thread answered: it met the lock, so not before.
    let atCommit: boolean | null = null
    const writer = store.usageWriter!
    const wake = writer.onDone
    writer.onDone = () => {
      atCommit ??= admitted
      wake?.()
    }
    await write
    // Microtasks only: no other turn of the loop since the thread's answer.
    for (let i = 0; i < 3; i++) await Promise.resolve()
    expect(atCommit).toBe(false as never)
    expect(admitted).toBe(true)
    await admitting
  } finally {
    globalThis.setTimeout = realSetTimeout
    probe.close()
    await store.close()
  }
})

test('the thread terminated mid-write: one error line, the batch written once on the loop, the write settles; later writes on the loop', async () => {
  const path = join(tempDir(), 'db.sqlite')
  const errors: unknown[] = []
  const { store, accountId } = await serving(path, undefined, errors)
  const probe = new Database(path)
  probe.run('PRAGMA busy_timeout = 0')
  try {
    const write = store.complete(batchOf(accountId, 20_000, 'T'))
    await lockTaken(probe)
    store.usageWriter!.thread!.terminate()
    await write
    expect(store.db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 20_000 })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ message: expect.stringContaining('usage writer thread failed') })
    expect(store.usageWriter!.running).toBe(false)
    const before = changesOf(store)
    await store.complete(batchOf(accountId, 10, 'after'))
    expect(changesOf(store)).toBeGreaterThan(before)
    expect(errors).toHaveLength(1)
  } finally {
    probe.close()
    await store.close()
  }
})

test("the thread failing with an error: one error line with the error's message; the write sent behind it written once, and it settles", async () => {
  const path = join(tempDir(), 'db.sqlite')
  const errors: { message: string; error: string }[] = []
  const { store, accountId } = await serving(path, undefined, errors as unknown[])
  try {
    // A message the thread cannot open: it throws outside any write, an uncaught error.
    store.usageWriter!.thread!.postMessage({ type: 'open', path: join(tempDir(), 'missing', 'no.sqlite') })
    // Written by the thread before it is ended, or on the loop after: once either way.
    await store.complete(batchOf(accountId, 100, 'E'))
    expect(store.db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 100 })
    await until(() => errors.length > 0)
    expect(errors).toHaveLength(1)
    expect(errors[0]!.error).toContain('unable to open')
  } finally {
    await store.close()
  }
})

test('the ms a piece is paced on is the time the thread held the lock, not its wait for another holder', async () => {
  const path = join(tempDir(), 'db.sqlite')
  const { store, accountId } = await serving(path)
  const other = new Database(path)
  try {
    other.run('BEGIN IMMEDIATE')
    const t0 = performance.now()
    const write = store.complete(batchOf(accountId, 1, 'W'))
    await Bun.sleep(300)
    other.run('COMMIT')
    await write
    const waited = performance.now() - t0
    // The thread waited ~300 ms for the lock; its one-row transaction held it far less.
    expect(store.usageWriteMs!()!).toBeLessThan(waited / 2)
  } finally {
    other.close()
    await store.close()
  }
})

test('a write awaited when nothing else keeps the process alive is finished before it exits (the thread is held while writes are pending)', async () => {
  const path = join(tempDir(), 'db.sqlite')
  const { store, accountId } = await serving(path)
  await store.close()
  // The process's last act is a write: nothing else (no server, no stdin) keeps it alive.
  const script = `
    import { openSqliteStore } from ${JSON.stringify(join(import.meta.dir, '../../src/store/index.ts'))}
    const store = openSqliteStore({ path: ${JSON.stringify(path)}, checkpointInThread: true })
    while (!store.usageWriter.running) await Bun.sleep(5)
    const batch = Array.from({ length: 5_000 }, (_, i) => ({
      gatewayId: 'x' + i, requestId: 'r' + i, surface: 'chat', stream: false, status: 200,
      promptTokens: 1, completionTokens: 1, latencyMs: 1, ttftMs: null, errorCode: null,
      counted: { accountId: ${accountId}, keyId: 'key_1', model: 'demo/echo', at: ${T0} + i },
    }))
    void store.complete(batch)
  `
  const proc = Bun.spawn([process.execPath, '-e', script], { stdout: 'inherit', stderr: 'inherit' })
  expect(await proc.exited).toBe(0)
  const db = new Database(path, { readonly: true })
  try {
    expect(db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 5_000 })
  } finally {
    db.close()
  }
})
