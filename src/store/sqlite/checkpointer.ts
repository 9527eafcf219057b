/**
 * @module
 * Moves a serving gateway's WAL checkpoints off the event loop (issue 46): a worker thread with
 * its own connection checkpoints every `EVERY_MS` (checkpoint-worker.ts), and this connection's
 * automatic checkpoint is raised to a backstop it reaches only if that thread falls far behind.
 * A checkpoint never decides what is committed: with WAL and synchronous=NORMAL a commit is in the
 * WAL file, and survives `kill -9`, whether or not it has been copied into the database yet.
 */
import type { Database } from 'bun:sqlite'

/** How often the thread checkpoints (ms): the WAL holds at most a few hundred ms of writes. */
const EVERY_MS = 200
/**
 * This connection's own automatic checkpoint (pages; SQLite's default is 1,000): about 40 MB of
 * WAL, reached only if the thread stalls or cannot start.
 */
const BACKSTOP_PAGES = 10_000
const SQLITE_DEFAULT_PAGES = 1_000

export interface Checkpointer {
  stop(): void
}

export function startCheckpointer(db: Database, path: string): Checkpointer {
  let worker: Worker | null = null
  const fallBack = () => {
    // No thread: SQLite checkpoints in the commits again, as it did before.
    db.run(`PRAGMA wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`)
    worker?.terminate()
    worker = null
  }
  try {
    // A compiled binary holds this file as a second entry point (scripts/build.ts).
    worker = new Worker(new URL('./checkpoint-worker.ts', import.meta.url).href)
    worker.addEventListener('error', fallBack)
    worker.postMessage({ path, everyMs: EVERY_MS })
    // The thread never keeps the process alive: the store's close ends it, and so does exit.
    worker.unref()
    db.run(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`)
  } catch {
    fallBack()
  }
  return {
    stop() {
      worker?.terminate()
      worker = null
    },
  }
}
