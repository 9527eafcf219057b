/**
 * @module
 * The embedded SQLite store (bun:sqlite, WAL). Every statement is prepared with bound
 * parameters. `synchronous=NORMAL` in WAL mode keeps every committed transaction across a
 * process crash (`kill -9`); only an OS crash or power loss can lose the last commits.
 *
 * The store is composed from parts (compose.ts), each call a read or a write under SqliteGuard;
 * admissions are group-committed (admissions.ts).
 *
 * No call blocks the event loop on another connection's lock: see SqliteGuard.
 */

import type { Database } from 'bun:sqlite'
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import { DEFAULT_SPANS, type WindowSpans } from '../../limits/types.ts'
import { composeStore } from '../compose.ts'
import type { Completion, Store } from '../types.ts'
import { AccountQueries } from './accounts.ts'
import { SqliteLimiter } from './admissions.ts'
import { SqliteAlerts } from './alerts.ts'
import { type Checkpointer, startCheckpointer } from './checkpointer.ts'
import { openConnection } from './connection.ts'
import { guarded, SqliteGuard } from './guard.ts'
import { sqliteHistory } from './history.ts'
import { migrate } from './migrations.ts'
import { RollupQueries } from './rollups.ts'
import { UsageQueries } from './usage.ts'
import { startUsageWriter, type UsageWriter } from './usage-writer.ts'

export interface SqliteOptions {
  path: string
  windows?: WindowSpans
  busyTimeoutMs?: number
  now?: number
  /**
   * WAL checkpoints (checkpointer.ts) and the usage flush's writes (usage-writer.ts) in threads of
   * their own instead of on the event loop: `serve` sets it; short-lived commands and tests do
   * not need the threads.
   */
  checkpointInThread?: boolean
  /** A thread that failed (its work moved to the event loop): one line, with the error. */
  error?(message: string, fields?: Record<string, unknown>): void
}

/** How long (ms) the store's close waits for its threads to close their connections. */
const CLOSE_BOUND_MS = 1_000

export function openSqliteStore(opts: SqliteOptions): SqliteStore {
  if (opts.path !== ':memory:') createPrivateFile(opts.path)
  const waitMs = Math.trunc(opts.busyTimeoutMs ?? 5000)
  // Start-up (migrations) may block on another process's lock; nothing is being served yet.
  const db = openConnection(opts.path, waitMs, true)
  db.run('PRAGMA journal_mode = WAL')
  migrate(db, opts.now ?? Date.now())
  // From here on a locked database fails at once and SqliteGuard waits for it without blocking.
  db.run('PRAGMA busy_timeout = 0')
  const threads = opts.checkpointInThread && opts.path !== ':memory:'
  const checkpointer = threads ? startCheckpointer(db, opts.path) : null
  const guard = new SqliteGuard(opts.path, waitMs)
  return composeSqlite(db, guard, opts.windows, checkpointer, threads ? opts : null)
}

/** The composed store, with its database handle for tests that read it directly. */
export type SqliteStore = Store & {
  readonly db: Database
  /** The serving store's usage writer thread (null: none), for tests. */
  readonly usageWriter: UsageWriter | null
}

function composeSqlite(
  db: Database,
  guard: SqliteGuard,
  windows: WindowSpans | undefined,
  checkpointer: Checkpointer | null,
  /** The serving store's options: the usage writer thread starts (null: none). */
  thread: SqliteOptions | null,
): SqliteStore {
  const limiter = new SqliteLimiter(db, guard, windows)
  const rollups = new RollupQueries(db)
  const usage = new UsageQueries(db, rollups, limiter.queries.reserve)
  const onLoop = (batch: Completion[]) => guard.run(() => usage.complete(batch), true)
  const writer = thread
    ? startUsageWriter({
        path: thread.path,
        guard,
        spans: windows ?? DEFAULT_SPANS,
        onLoop,
        committed: (batch) => usage.written(batch),
        onFailed: (err) =>
          thread.error?.('the usage writer thread failed: the usage flush is written on the event loop', {
            error: String(err),
          }),
      })
    : null
  // An admission that met the writer thread's lock retries as soon as the thread commits.
  if (writer) writer.onDone = limiter.lockFreed
  const accounts = guarded(
    guard,
    new AccountQueries(db),
    ['getAccount', 'listAccounts', 'planHistory', 'findKeyByHash', 'getKey', 'listKeys', 'authGeneration'],
    [
      'createAccount',
      'setAccountPlan',
      'setAccountEnabled',
      'createKey',
      'setKeyLimits',
      'setKeyState',
      'rotateKey',
      'setKeySuspended',
    ],
  )
  const parts = {
    accounts,
    limiter,
    usage: {
      ...guarded(guard, usage, ['usageSummary'], []),
      complete: (batch: Completion[]) => writer?.write(batch) ?? onLoop(batch),
    },
    history: sqliteHistory(db, guard, usage, rollups, limiter.queries),
    alerts: new SqliteAlerts(db, guard),
  }
  const backend = {
    health: () => guard.health(),
    close() {
      // Admissions queued for this turn are decided before the handle goes.
      limiter.flush()
      // This connection first, then the threads' one after the other: closing two at once, each
      // could see the other still open and neither remove the WAL (measured: 1 close in 15).
      db.close()
      const threads = (async () => {
        await writer?.stop()
        await checkpointer?.stop()
      })()
      // Bounded: a thread that does not end leaves its connection to the process's exit.
      let timer: ReturnType<typeof setTimeout> | undefined
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_BOUND_MS)
      })
      return Promise.race([threads, bound]).finally(() => clearTimeout(timer))
    },
  }
  // null when the last batch went on the loop (before the thread runs): the loop's time counts.
  return composeStore(parts, backend, {
    db,
    usageWriter: writer,
    usageWriteMs: () => writer?.lastMs ?? null,
  })
}

/**
 * The database holds key hashes and the request log: owner-only. SQLite gives the -wal and -shm
 * files the mode of the database file, so creating that one 0600 covers all three.
 */
function createPrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true })
  if (existsSync(path)) return
  try {
    closeSync(openSync(path, 'wx', 0o600))
  } catch (err) {
    // Another process created it first: that one's mode stands.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
}
