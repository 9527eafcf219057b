/**
 * A serving gateway's WAL checkpoints run in a thread of their own (issue 46). SQLite ran them in
 * whichever commit crossed 1,000 WAL pages, on the event loop: 30–75 ms of copying and syncing in
 * one request's turn on the bench machine's disk. Here a few hundred pages, written in one
 * transaction, reach the database file within seconds with no commit after them — on the loop,
 * nothing would copy them until the WAL had grown to 1,000 pages.
 */
import { expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { type Completion, openSqliteStore } from '../../src/store/index.ts'
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
    const batch: Completion[] = Array.from({ length: 2_000 }, (_, i) => ({
      gatewayId: `g${i}`,
      requestId: `request-${i}-${'x'.repeat(40)}`,
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
    await store.complete(batch)
    const walPages = statSync(`${path}-wal`).size / 4096
    // Below SQLite's own threshold: without the thread these pages stay in the WAL.
    expect(walPages).toBeGreaterThan(100)
    expect(walPages).toBeLessThan(1_000)
    const deadline = Date.now() + 10_000
    while (statSync(path).size <= before && Date.now() < deadline) await Bun.sleep(20)
    expect(statSync(path).size).toBeGreaterThan(before)
  } finally {
    store.close()
  }
})
