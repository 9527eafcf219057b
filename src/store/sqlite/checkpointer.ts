/**
 * @module
 * Moves a serving gateway's WAL checkpoints off the event loop (issue 46). A checkpoint copies the
 * WAL into the database file and syncs it — 30–75 ms for 1,000 pages on the bench machine's disk —
 * and run by SQLite itself it runs inside whichever commit crosses `wal_autocheckpoint`: on the
 * event loop, in some request's turn. Here a worker thread with its own connection checkpoints
 * every `EVERY_MS` (PASSIVE: it never waits for a reader or a writer; what it cannot copy now it
 * copies next time), and once it has said it is running, this connection's own automatic
 * checkpoint is raised to a backstop reached only if the thread falls far behind. A checkpoint
 * never decides what is committed: with WAL and synchronous=NORMAL a commit is in the WAL file,
 * and survives `kill -9`, whether or not it has been copied into the database yet.
 */
import type { Database } from 'bun:sqlite'

/** How often the thread checkpoints (ms): the WAL holds at most a few hundred ms of writes. */
const EVERY_MS = 200
/**
 * This connection's own automatic checkpoint once the thread runs (pages; SQLite's default is
 * 1,000): about 40 MB of WAL, reached only if the thread stalls.
 */
export const BACKSTOP_PAGES = 10_000
/** SQLite's own automatic checkpoint (pages), back when the thread fails. */
const SQLITE_DEFAULT_PAGES = 1_000

/**
 * The thread's code, plain JavaScript run from a Blob: in a compiled binary (its code bundled, in
 * chunks) a worker's own module path does not resolve (measured: the thread never started), and
 * a Blob of TypeScript does not run at all. It says `ready` once it has checkpointed once.
 */
const WORKER_SOURCE = `
import { Database } from 'bun:sqlite'
let db = null
let checkpoint = null
let timer = null
self.onmessage = (e) => {
  if (e.data === 'stop') {
    // Its own connection closed here, not left to the thread's teardown: the file handles go now,
    // and, the last connection to close, this one copies what is left and removes the WAL.
    clearInterval(timer)
    // The statement finalized first: a connection closed with one still open lingers as a zombie
    // (sqlite3_close_v2) holding its file handles until the statement is collected.
    try {
      checkpoint?.finalize()
      db?.close()
    } catch {}
    self.close()
    return
  }
  db = new Database(e.data.path)
  db.run('PRAGMA busy_timeout = 0')
  checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
  const run = () => {
    try {
      checkpoint.get()
    } catch {}
  }
  run()
  timer = setInterval(run, e.data.everyMs)
  postMessage('ready')
}
`

export interface Checkpointer {
  /** Resolves once the thread has closed its connection and ended. */
  stop(): Promise<void>
}

export function startCheckpointer(db: Database, path: string): Checkpointer {
  let worker: Worker | null = null
  /** Stopped (the store is closing or closed): a `ready` or an error still queued changes nothing. */
  let stopped = false
  /** `sql`: one of the two constant PRAGMAs below. */
  const autocheckpoint = (sql: string) => {
    if (stopped) return
    try {
      db.run(sql)
    } catch {
      // The store has closed meanwhile: nothing left to checkpoint.
    }
  }
  try {
    const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }))
    worker = new Worker(url)
    worker.onmessage = (e: MessageEvent) => {
      if (e.data === 'ready') autocheckpoint(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`)
    }
    // A thread that fails leaves SQLite checkpointing in the commits, as it always did.
    worker.addEventListener('error', () => {
      worker?.terminate()
      worker = null
      autocheckpoint(`PRAGMA wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`)
    })
    worker.postMessage({ path, everyMs: EVERY_MS })
    // The thread never keeps the process alive: the store's close ends it, and so does exit.
    worker.unref()
  } catch {
    worker = null
  }
  return {
    stop() {
      stopped = true
      const w = worker
      if (!w) return Promise.resolve()
      worker = null
      w.onmessage = null
      const closed = new Promise<void>((resolve) => w.addEventListener('close', () => resolve()))
      // Held until it has closed its connection: the process does not exit before (the store's
      // close awaits it, bounded).
      w.ref()
      // The thread closes its connection and then itself (WORKER_SOURCE); terminate() would cut
      // it wherever it was and leave its connection to the thread's teardown.
      w.postMessage('stop')
      return closed
    },
  }
}
