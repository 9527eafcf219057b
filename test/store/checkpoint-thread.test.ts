/**
 * A serving gateway's WAL checkpoints run in a thread of their own (issue 46). SQLite ran them in
 * whichever commit crossed 1,000 WAL pages, on the event loop: 30–75 ms of copying and syncing in
 * one request's turn on the bench machine's disk. Here a few hundred pages, written in one
 * transaction, reach the database file within seconds with no commit after them — on the loop,
 * nothing would copy them until the WAL had grown to 1,000 pages.
 */
import { expect, test } from 'bun:test'
import { existsSync, readdirSync, readlinkSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { openSqliteStore } from '../../src/store/index.ts'
import { completions } from '../support/admissions.ts'
import { tempDir } from '../support/config-doc.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')

test('the WAL is copied into the database file by the checkpoint thread, with no commit crossing the threshold', async () => {
  const path = join(tempDir(), 'db.sqlite')
  const store = openSqliteStore({ path, now: T0, checkpointInThread: true })
  try {
    const { id: accountId } = await store.createAccount({
      name: 'acme',
      plan: 'free',
      planStartedAt: T0,
      planExpiresAt: null,
      now: T0,
    })
    const before = statSync(path).size
    // Long request ids: they size the WAL the bounds below are about.
    const batch = completions(accountId, 2_000, 'g', T0).map((c, i) => ({
      ...c,
      requestId: `request-${i}-${'x'.repeat(40)}`,
    }))
    await store.complete(batch)
    const walPages = statSync(`${path}-wal`).size / 4096
    // Below SQLite's own threshold: without the thread these pages stay in the WAL.
    expect(walPages).toBeGreaterThan(100)
    expect(walPages).toBeLessThan(1_000)
    const deadline = Date.now() + 10_000
    while (statSync(path).size <= before && Date.now() < deadline) await Bun.sleep(20)
    expect(statSync(path).size).toBeGreaterThan(before)
  } finally {
    await store.close()
  }
})

/** This process's open file handles on the database, its WAL or its shared memory. */
function handles(path: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(path)
    } catch {
      return false // closed meanwhile
    }
  }).length
}

test("the store's close ends the thread's connection too: no handle on the database is left and the WAL is gone", async () => {
  const path = join(tempDir(), 'db.sqlite')
  const thrown: unknown[] = []
  const onError = (err: unknown) => thrown.push(err)
  process.on('uncaughtException', onError)
  try {
    const store = openSqliteStore({ path, now: T0, checkpointInThread: true })
    const pages = () => store.db.query('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }
    // The thread has said it runs (its `ready` raised the backstop): the loop's, the checkpointer's and the usage writer's connections are open.
    const deadline = Date.now() + 10_000
    while (pages().wal_autocheckpoint !== 10_000 && Date.now() < deadline) await Bun.sleep(10)
    expect(pages().wal_autocheckpoint).toBe(10_000)
    await store.close()
    while ((handles(path) > 0 || existsSync(`${path}-wal`)) && Date.now() < deadline) await Bun.sleep(10)
    expect(handles(path)).toBe(0)
    expect(existsSync(`${path}-wal`)).toBe(false)
    // Closed while the thread's `ready` may still be on its way: it must find nothing to change.
    const again = openSqliteStore({ path, now: T0, checkpointInThread: true })
    Bun.sleepSync(300)
    await again.close()
    await Bun.sleep(100)
    expect(thrown).toEqual([])
  } finally {
    process.off('uncaughtException', onError)
  }
})
