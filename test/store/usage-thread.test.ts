/**
 * A serving store writes the usage flush on a thread of its own (issue 46, sixth pass): on the
 * event loop a flush piece held the loop 0.6–0.8 ms at one request at a time, the lane's p99.
 * The thread's connection writes the same one transaction a batch; a lock held elsewhere is still
 * waited out up to the store's bound and then `StoreBusyError` (the recorder puts the batch back),
 * and an admission that met the thread's lock is retried as soon as the thread has committed.
 */
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { existsSync, readdirSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { type Completion, openSqliteStore, type SqliteStore, StoreBusyError } from '../../src/store/index.ts'
import { SqliteLimiter } from '../../src/store/sqlite/admissions.ts'
import { SqliteGuard } from '../../src/store/sqlite/guard.ts'
import { admission } from '../support/admissions.ts'
import { tempDir } from '../support/config-doc.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')

/** Connections this process holds on the database file (each has its own handle on it). */
function connections(path: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path
    } catch {
      return false // closed meanwhile
    }
  }).length
}

async function until(ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!ok() && Date.now() < deadline) await Bun.sleep(10)
}

const batchOf = (accountId: number, n: number, tag: string): Completion[] =>
  Array.from({ length: n }, (_, i) => ({
    gatewayId: `${tag}${i}`,
    requestId: `request-${tag}-${i}`,
    surface: 'chat',
    stream: false,
    status: 200,
    promptTokens: 10,
    completionTokens: 5,
    latencyMs: 1,
    ttftMs: null,
    errorCode: null,
    counted: { accountId, keyId: 'key_1', model: 'demo/echo', at: T0 + i },
  }))

const changesOf = (store: SqliteStore) =>
  (store.db.query('SELECT total_changes() AS n').get() as { n: number }).n

async function serving(
  path: string,
  busyTimeoutMs?: number,
): Promise<{ store: SqliteStore; accountId: number }> {
  const store = openSqliteStore({ path, now: T0, checkpointInThread: true, busyTimeoutMs })
  const { id } = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  // The loop's, the checkpoint thread's and the usage writer's: the writer has opened its own.
  await until(() => connections(path) === 3)
  // Until the writer has said it runs, a batch is written on the loop's connection as before.
  const deadline = Date.now() + 10_000
  for (let i = 0; Date.now() < deadline; i++) {
    const before = changesOf(store)
    await store.complete(batchOf(id, 1, `warm${i}-`))
    if (changesOf(store) === before) break
    await Bun.sleep(10)
  }
  store.db.run("DELETE FROM requests WHERE gateway_id LIKE 'warm%'")
  store.db.run('DELETE FROM usage_minutes')
  store.db.run('DELETE FROM usage_hourly')
  store.db.run('DELETE FROM usage_daily')
  return { store, accountId: id }
}

test("a serving store's usage flush is written by its writer thread's connection, not the event loop's", async () => {
  const path = join(tempDir(), 'db.sqlite')
  const { store, accountId } = await serving(path)
  try {
    expect(connections(path)).toBe(3)
    const before = changesOf(store)
    await store.complete(batchOf(accountId, 500, 'g'))
    // Every row is there (read on the loop's connection), and that connection changed none.
    expect(store.db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 500 })
    const minute = store.db.query('SELECT prompt_tokens AS p FROM usage_minutes').get() as { p: number }
    expect(minute.p).toBe(5_000)
    expect(changesOf(store) - before).toBe(0)
  } finally {
    store.close()
  }
})

test("the writer thread waits for another connection's lock up to the store's bound, then StoreBusyError; nothing half-written", async () => {
  const path = join(tempDir(), 'db.sqlite')
  const { store, accountId } = await serving(path, 300)
  const other = new Database(path)
  try {
    other.run('BEGIN IMMEDIATE')
    const err = await store.complete(batchOf(accountId, 50, 'b')).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(StoreBusyError)
    other.run('COMMIT')
    expect(store.db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 0 })
    // Put back and written again (the recorder's retry), it is written once.
    await store.complete(batchOf(accountId, 50, 'b'))
    expect(store.db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 50 })
  } finally {
    other.close()
    store.close()
  }
})

test("the store's close ends the writer's and the checkpointer's connections in turn: no handle left, the WAL gone", async () => {
  const path = join(tempDir(), 'db.sqlite')
  const { store, accountId } = await serving(path)
  await store.complete(batchOf(accountId, 100, 'c'))
  store.close()
  await until(() => connections(path) === 0 && !existsSync(`${path}-wal`))
  expect(connections(path)).toBe(0)
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
