/**
 * @module
 * Keeps bun:sqlite's synchronous calls from stalling the event loop and watches the database
 * file. The connection's own busy timeout is 0: a call that finds the write lock taken fails at
 * once, and `run` retries it on a timer with backoff until the caller's deadline
 * (`database.busy_timeout_ms`), then throws `StoreBusyError`. So while another process holds
 * the lock, everything that does not need it — `/healthz`, streams in flight — goes on.
 *
 * It also remembers a full disk (cleared by the next successful write, or once the file system
 * has room again) and notices when the database file is deleted or replaced under us (its
 * device and inode change): from then on every write would go to a file no one else sees.
 */
import { statfsSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { StoreBusyError, type StoreHealth, StoreUnavailableError } from '../errors.ts'
import { isBusy, unavailable } from './errors.ts'

const FIRST_DELAY_MS = 1
const MAX_DELAY_MS = 20
/** Free space under which a disk that was full still counts as full. */
const FREE_MARGIN_BYTES = 1 << 20

export class SqliteGuard {
  private readonly identity: { dev: number; ino: number } | null
  private diskFull = false

  constructor(
    private readonly path: string,
    /** How long one call may wait for another connection's lock. */
    readonly waitMs: number,
  ) {
    this.identity = path === ':memory:' ? null : fileIdentity(path)
  }

  /** Runs `fn`, retrying asynchronously while the database is locked, until `waitMs` has passed. */
  async run<T>(fn: () => T, write = false): Promise<T> {
    const deadline = performance.now() + this.waitMs
    for (let delay = FIRST_DELAY_MS; ; delay = Math.min(delay * 2, MAX_DELAY_MS)) {
      try {
        const result = fn()
        if (write) this.wrote()
        return result
      } catch (err) {
        if (!isBusy(err)) throw this.classify(err)
        const left = deadline - performance.now()
        if (left <= 0) throw new StoreBusyError(this.waitMs - left)
        delay = Math.min(delay, left)
      }
      await Bun.sleep(delay)
    }
  }

  read<T>(fn: () => T): Promise<T> {
    return this.run(fn)
  }

  write<T>(fn: () => T): Promise<T> {
    return this.run(fn, true)
  }

  /** A write succeeded: the disk is not full (any more). */
  wrote(): void {
    this.diskFull = false
  }

  /** The store's error for a failed call (remembering a full disk), or the error itself. */
  classify(err: unknown): unknown {
    const u = unavailable(err)
    if (u?.reason === 'disk_full') this.diskFull = true
    return u ?? err
  }

  /** Cheap enough for every `/healthz`: one stat, plus a statfs while the disk was full. */
  health(): StoreHealth {
    const lost = this.fileLost()
    if (lost) return { ok: false, reason: 'file_lost', detail: lost, fatal: true }
    if (this.diskFull) {
      if (freeBytes(dirname(this.path)) < FREE_MARGIN_BYTES)
        return { ok: false, reason: 'disk_full', detail: 'the database disk is full' }
      this.diskFull = false
    }
    return { ok: true }
  }

  /** Throws when the database file is gone, so a write is refused rather than lost. */
  assertFile(): void {
    const lost = this.fileLost()
    if (lost) throw new StoreUnavailableError('file_lost', lost)
  }

  private fileLost(): string | null {
    if (!this.identity) return null
    const now = fileIdentity(this.path)
    if (!now) return `the database file ${this.path} was deleted while the gateway was running`
    if (now.dev !== this.identity.dev || now.ino !== this.identity.ino)
      return `the database file ${this.path} was replaced while the gateway was running`
    return null
  }
}

function fileIdentity(path: string): { dev: number; ino: number } | null {
  try {
    const s = statSync(path)
    return { dev: s.dev, ino: s.ino }
  } catch {
    return null
  }
}

function freeBytes(dir: string): number {
  try {
    const s = statfsSync(dir)
    return s.bavail * s.bsize
  } catch {
    return 0
  }
}

/** `Q`'s methods `K`, each answering through a promise. */
export type Guarded<Q, K extends keyof Q> = {
  [M in K]: Q[M] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never
}

/**
 * Synchronous queries as a store part: each method named runs under the guard, as a read or as a
 * write (a write clears a remembered full disk).
 * @example
 * const usage = guarded(guard, new UsageQueries(db), ['usageSummary'], ['complete'])
 */
export function guarded<Q extends object, R extends keyof Q, W extends keyof Q>(
  guard: SqliteGuard,
  queries: Q,
  reads: readonly R[],
  writes: readonly W[],
): Guarded<Q, R | W> {
  const part: Record<PropertyKey, unknown> = {}
  const bind = (name: keyof Q, write: boolean) => {
    const fn = (queries[name] as (...args: unknown[]) => unknown).bind(queries)
    part[name] = (...args: unknown[]) => guard.run(() => fn(...args), write)
  }
  for (const name of reads) bind(name, false)
  for (const name of writes) bind(name, true)
  return part as Guarded<Q, R | W>
}
