/**
 * @module
 * The usage flush's writes on a thread of their own (issue 46, usage-writer.ts starts it): its own
 * connection writes a batch as the event loop's `UsageQueries.complete` does — one transaction a
 * batch (its own `BEGIN IMMEDIATE` around `completeLocked`): the log rows, the settlements, the
 * counters and rollups — so the loop no longer holds for a batch's inserts and its commit.
 * Messages: `open` (path, busy wait, window spans) → `ready`;
 * `write` (id, batch) → `done` (id, the ms the transaction held the lock, or the error's message and
 * code); `stop` → the connection closed, then the thread ends.
 */
import type { Database } from 'bun:sqlite'
import type { WindowSpans } from '../../limits/types.ts'
import type { Completion } from '../types.ts'
import { BACKSTOP_PAGES } from './checkpointer.ts'
import { openConnection } from './connection.ts'
import { ReserveQueries } from './reserve.ts'
import { RollupQueries } from './rollups.ts'
import { UsageQueries } from './usage.ts'

export type ToThread =
  | { type: 'open'; path: string; waitMs: number; spans: WindowSpans }
  | { type: 'write'; id: number; batch: Completion[] }
  | { type: 'stop' }
export type FromThread =
  | { type: 'ready' }
  | { type: 'done'; id: number; ms?: number; error?: { message: string; code: string } }

declare const self: Worker & { close(): void }
let db: Database | null = null
let usage: UsageQueries | null = null
const reply = (m: FromThread) => self.postMessage(m)

self.onmessage = (e: MessageEvent<ToThread>) => {
  const m = e.data
  if (m.type === 'open') {
    // This thread may wait for another connection's lock (an admission's, another process's):
    // it blocks only itself, up to the store's own bound, then fails as the loop's write would.
    db = openConnection(m.path, Math.trunc(m.waitMs))
    // Most commits are this connection's: with SQLite's 1,000-page default some would run a
    // 30–75 ms checkpoint inside the write lock (and inflate the ms below). The checkpoint thread
    // does that work; this is the same backstop it gives the loop's connection (checkpointer.ts).
    db.run(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`)
    usage = new UsageQueries(db, new RollupQueries(db), new ReserveQueries(db, m.spans))
    reply({ type: 'ready' })
  } else if (m.type === 'write') {
    try {
      // The lock is taken here (waiting for another holder up to busy_timeout), so `ms` below is
      // the time this transaction held the write lock, not its wait: the recorder sizes its pieces
      // on it. The batch is written in this transaction, not in one nested as a savepoint
      // (`completeLocked`: no copy of each page it changes).
      db!.run('BEGIN IMMEDIATE')
      const t0 = performance.now()
      try {
        usage!.completeLocked(m.batch)
        db!.run('COMMIT')
      } catch (err) {
        if (db!.inTransaction) db!.run('ROLLBACK')
        throw err
      }
      reply({ type: 'done', id: m.id, ms: performance.now() - t0 })
    } catch (err) {
      const x = err as { message?: unknown; code?: unknown }
      reply({ type: 'done', id: m.id, error: { message: String(x?.message), code: String(x?.code ?? '') } })
    }
  } else {
    try {
      db?.close()
    } catch {}
    // The thread's end (the worker's `close` event) tells the writer its connection is closed.
    self.close()
  }
}
