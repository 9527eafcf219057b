/**
 * The alert deliveries queue (store/alert-types.ts) on SQLite and PostgreSQL: a mark queues its
 * alert once; two senders claiming at once never get the same row; a claimed row is due again
 * when its lease ends (a sender that died); a try is recorded; the list pages newest first.
 */

import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { AlertStore } from '../../src/store/index.ts'
import { openPostgres } from '../../src/store/postgres/index.ts'
import { openSqliteStore } from '../../src/store/sqlite/index.ts'
import { backends, TEST_POOL_SIZE } from '../support/backends.ts'
import { tempDir } from '../support/config-doc.ts'

const T0 = Date.UTC(2026, 10, 29, 12)

for (const b of backends('alert-queue.test.ts').filter((x) => x.name !== 'postgres+redis')) {
  describe.skipIf(b.skip)(b.name, () => {
    async function open(): Promise<{ store: AlertStore; close(): Promise<void> | void }> {
      const { databaseUrl } = await b.fresh()
      if (!databaseUrl) {
        const s = openSqliteStore({ path: join(tempDir(), 'db.sqlite'), now: T0 })
        return { store: s, close: () => s.close() }
      }
      const pg = await openPostgres({
        url: databaseUrl,
        poolSize: TEST_POOL_SIZE,
        windows: { minuteMs: 60_000, dayMs: 86_400_000 },
        engineTime: false,
      })
      return { store: pg.alerts, close: () => pg.close() }
    }

    test('marks, claims, leases, tries and pages', async () => {
      const { store, close } = await open()
      try {
        const alert = (eventId: string, mark: string | null) => ({
          eventId,
          event: 'budget.threshold',
          body: JSON.stringify({ id: eventId }),
          urls: ['http://127.0.0.1:1/a', 'http://127.0.0.1:1/b'],
          now: T0,
          mark,
        })
        expect(await store.enqueueAlert(alert('evt_1', 'm:50'))).toBe(true)
        expect(await store.enqueueAlert(alert('evt_2', 'm:50'))).toBe(false)
        expect(await store.enqueueAlert(alert('evt_3', null))).toBe(true)
        const [a, c] = await Promise.all([
          store.claimDeliveries(T0, 1_000, 3),
          store.claimDeliveries(T0, 1_000, 3),
        ])
        const claimed = [...a, ...c].map((d) => d.id)
        expect(claimed).toHaveLength(4)
        expect(new Set(claimed).size).toBe(4)
        // Leased: nothing due until the lease ends, then every row again.
        expect(await store.claimDeliveries(T0 + 999, 1_000, 10)).toEqual([])
        const again = await store.claimDeliveries(T0 + 1_000, 1_000, 10)
        expect(again).toHaveLength(4)
        const first = again[0]!
        await store.deliveryTried(first.id, {
          state: 'delivered',
          status: 200,
          error: null,
          nextAt: T0,
          now: T0 + 1_001,
        })
        const [x, y] = again.slice(1)
        await store.deliveryTried(x!.id, {
          state: 'pending',
          status: 500,
          error: 'answered 500',
          nextAt: T0 + 5_000,
          now: T0 + 1_001,
        })
        await store.deliveryTried(y!.id, {
          state: 'failed',
          status: null,
          error: 'gone',
          nextAt: T0,
          now: T0 + 1_001,
        })
        const page1 = await store.listDeliveries({ beforeId: null, limit: 2 })
        const page2 = await store.listDeliveries({ beforeId: page1.at(-1)!.id, limit: 10 })
        const all = [...page1, ...page2]
        expect(all.map((d) => d.id)).toEqual([...claimed].sort((m, n) => n - m))
        expect(all.find((d) => d.id === first.id)).toMatchObject({
          state: 'delivered',
          attempts: 1,
          lastStatus: 200,
          doneAt: T0 + 1_001,
        })
        expect(all.find((d) => d.id === x!.id)).toMatchObject({
          state: 'pending',
          attempts: 1,
          lastError: 'answered 500',
          nextAt: T0 + 5_000,
          doneAt: null,
        })
        expect(all.find((d) => d.id === y!.id)).toMatchObject({ state: 'failed', lastError: 'gone' })
        // Delivered and failed rows are never claimed again; the pending one at its time.
        const due = await store.claimDeliveries(T0 + 10_000, 1_000, 10)
        expect(due.map((d) => d.id).sort()).toEqual(
          again
            .filter((d) => d.id !== first.id && d.id !== y!.id)
            .map((d) => d.id)
            .sort(),
        )
        expect(all.every((d) => d.body.startsWith('{"id":"evt_'))).toBe(true)
        // Retention: the finished rows and the marks before the bound go; the pending ones stay.
        expect(await store.pruneAlerts(T0 + 1_002, 100)).toBe(3)
        const left = await store.listDeliveries({ beforeId: null, limit: 10 })
        expect(left.every((d) => d.state === 'pending')).toBe(true)
        expect(left).toHaveLength(2)
        expect(await store.enqueueAlert(alert('evt_4', 'm:50'))).toBe(true)
      } finally {
        await close()
      }
    })
  })
}

test('SQLite: an idle sender poll reads, never waiting on the write lock another process holds', async () => {
  const path = join(tempDir(), 'db.sqlite')
  // A busy wait (10 s) far past what a loaded machine makes of a read (the bound below, 5 s).
  const store = openSqliteStore({ path, now: T0, busyTimeoutMs: 10_000 })
  const other = new Database(path)
  try {
    // Another process mid-write (an admission, a usage flush): the file's write lock is taken.
    other.run('BEGIN IMMEDIATE')
    const started = performance.now()
    expect(await store.claimDeliveries(T0, 1_000, 10)).toEqual([])
    expect(performance.now() - started).toBeLessThan(5_000)
    other.run('COMMIT')
    // With a row due, the claim takes the write lock as before.
    await store.enqueueAlert({
      eventId: 'evt_1',
      event: 'circuit.opened',
      body: '{"id":"evt_1"}',
      urls: ['http://127.0.0.1:1/a'],
      now: T0,
      mark: null,
    })
    expect(await store.claimDeliveries(T0, 1_000, 10)).toHaveLength(1)
  } finally {
    other.close()
    store.close()
  }
})
