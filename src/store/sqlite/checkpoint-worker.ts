/**
 * @module
 * The WAL checkpoints of a serving gateway, in a thread of their own (checkpointer.ts): a
 * checkpoint copies the WAL into the database file and syncs it — 30–75 ms for 1,000 pages on the
 * bench machine's disk — and run by SQLite itself it runs inside whichever commit crosses
 * `wal_autocheckpoint`, on the event loop, in a request's turn. PASSIVE never waits for a reader
 * or a writer: what it cannot copy now it copies next time. The first message is
 * `{ path, everyMs }`.
 */
import { Database } from 'bun:sqlite'

declare const self: Worker

self.onmessage = (e: MessageEvent<{ path: string; everyMs: number }>) => {
  const db = new Database(e.data.path)
  // Never wait for a lock here: a checkpoint that finds one busy is tried again next time.
  db.run('PRAGMA busy_timeout = 0')
  const checkpoint = db.query('PRAGMA wal_checkpoint(PASSIVE)')
  setInterval(() => {
    try {
      checkpoint.get()
    } catch {
      // Busy, or the file went away (the store's guard reports that): next time.
    }
  }, e.data.everyMs)
}
