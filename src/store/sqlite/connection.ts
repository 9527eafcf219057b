/**
 * @module
 * A connection to the store's file as every connection of the process has it: `strict` binding,
 * the busy wait given (ms), `synchronous=NORMAL` (in WAL mode a commit survives a crash of the
 * process, not a power cut) and foreign keys on. The event loop's connection (index.ts) and the
 * usage writer thread's (usage-thread.ts) are opened here; the WAL mode itself is the file's, set
 * once by the first.
 */
import { Database } from 'bun:sqlite'

export function openConnection(path: string, waitMs: number, create = false): Database {
  const db = new Database(path, { create, strict: true })
  // PRAGMA takes no bound parameter: its one value a whole number of ms (callers truncate the
  // validated config's bound).
  db.run(`PRAGMA busy_timeout = ${waitMs}`)
  db.run('PRAGMA synchronous = NORMAL')
  db.run('PRAGMA foreign_keys = ON')
  return db
}
