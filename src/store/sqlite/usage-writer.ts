/**
 * @module
 * The usage flush's write off the event loop (issue 46, sixth pass). On the loop a flush piece —
 * its log rows (a row and five indexes each), settlements, counters, rollups and the commit —
 * held the loop 0.6–0.8 ms at one request at a time (60 outcomes), in 1–1.6 % of the requests:
 * the lane's p99. Here a thread with its own connection (usage-thread.ts) runs the same
 * transaction; the loop only posts the batch and awaits the answer.
 *
 * What stays as it was: the admission is committed on the loop's connection before the request
 * goes upstream (this writes only outcomes); a batch is one transaction, written or not; a lock
 * held elsewhere is waited for up to the store's bound, then `StoreBusyError` (the recorder puts
 * the batch back); a full disk or I/O error is `StoreUnavailableError`; other processes on the
 * file see the same rows. The loop's connection meets the thread's lock as it meets another
 * process's (busy_timeout 0, retried on a timer: admissions.ts, guard.ts).
 *
 * Until the thread has said it runs, or after it failed, `write` answers null and the caller
 * writes on the loop as before. A thread that fails (an error, or it ends unasked) is logged once
 * and not restarted; the batches it had not answered are written on the loop unless their
 * transaction committed (checked on the loop's connection: a batch is written whole or not at
 * all), so none is lost or counted twice, and every write settles.
 */
import type { WindowSpans } from '../../limits/types.ts'
import { StoreBusyError } from '../errors.ts'
import type { Completion } from '../types.ts'
import { isBusy } from './errors.ts'
import type { SqliteGuard } from './guard.ts'
import type { FromThread, ToThread } from './usage-thread.ts'

/**
 * The thread's module. From source it is beside this file. Bundled (`bun run build` compiles, and
 * the tests' spawned gateway bundles, src/main.ts with the thread as a second entry point, split
 * into chunks), this module is in a chunk beside the entry, whose URL `import.meta.url` then is,
 * and the thread's entry sits under the entry points' common folder (src/) as `.js` — on disk
 * beside the bundle, in a compiled binary in Bun's embedded file system (measured, Bun 1.4: `.js`
 * resolves in both, `.ts` only in the binary).
 */
const THREAD_URL = import.meta.url.endsWith('/usage-writer.ts')
  ? new URL('./usage-thread.ts', import.meta.url).href
  : new URL('./store/sqlite/usage-thread.js', import.meta.url).href

interface Waiting {
  batch: Completion[]
  resolve: () => void
  reject: (err: unknown) => void
}

export interface UsageWriterOptions {
  path: string
  guard: SqliteGuard
  spans: WindowSpans
  /** Writes a batch on the loop's connection (where a failed thread's batches go). */
  onLoop(batch: Completion[]): Promise<void>
  /** Whether a batch's transaction committed (read on the loop's connection). */
  committed(batch: Completion[]): boolean
  /** Told once, when the thread fails and writing moves to the loop. */
  onFailed(err: unknown): void
}

export interface UsageWriter {
  /** The batch written by the thread; null while the thread is not running (write it here). */
  write(batch: Completion[]): Promise<void> | null
  /** Closes the thread's connection; resolves once the thread has ended. */
  stop(): Promise<void>
  /** Told after each write the thread ended, written or not: its lock is free. */
  onDone: (() => void) | null
  /** ms the thread's last written transaction held the write lock (not its wait); null: none yet. */
  lastMs: number | null
  /** The thread is running and takes the writes. */
  readonly running: boolean
  /** The thread itself (null: none, or failed), for tests that make it fail. */
  readonly thread: Worker | null
}

export function startUsageWriter(opts: UsageWriterOptions): UsageWriter {
  const { guard } = opts
  let worker: Worker | null = null
  let ready = false
  let next = 0
  const waiting = new Map<number, Waiting>()
  /** Set by stop(): its end (the thread has ended, or failed). */
  let stopped: (() => void) | null = null
  /**
   * Held (ref) while a write is awaited or the thread is closing, so exit does not cut the last
   * flush; otherwise the thread never keeps the process alive.
   */
  const hold = () => {
    if (!worker) return
    if (waiting.size > 0 || stopped) worker.ref()
    else worker.unref()
  }
  /** The thread has ended (`close`): after an error, after stop(), or unasked. */
  const fail = (err: unknown) => {
    if (!worker) return
    ready = false
    worker = null
    const then = stopped
    stopped = null
    if (!then) opts.onFailed(err)
    const lost = [...waiting.values()]
    waiting.clear()
    for (const x of lost) {
      // The thread has ended: a transaction it left open is rolled back, one it committed is there.
      let done = false
      try {
        done = opts.committed(x.batch)
      } catch {}
      if (done) x.resolve()
      else opts.onLoop(x.batch).then(x.resolve, x.reject)
    }
    writer.onDone?.()
    then?.()
  }
  const send = (m: ToThread) => worker!.postMessage(m)
  try {
    worker = new Worker(THREAD_URL)
    worker.onmessage = (e: MessageEvent<FromThread>) => {
      const m = e.data
      if (m.type === 'ready') ready = true
      else if (m.type === 'done') {
        const w = waiting.get(m.id)
        waiting.delete(m.id)
        hold()
        if (!m.error) {
          writer.lastMs = m.ms ?? null
          guard.wrote()
          w?.resolve()
        } else {
          const err = Object.assign(new Error(m.error.message), { code: m.error.code })
          w?.reject(isBusy(err) ? new StoreBusyError(guard.waitMs) : guard.classify(err))
        }
        writer.onDone?.()
      }
    }
    // Failed: ended here, and its writes taken over once it has (`close`), not while it may still
    // be inside a transaction it would commit.
    let failure: unknown = null
    worker.addEventListener('error', (e: ErrorEvent) => {
      failure ??= e.error ?? new Error(e.message)
      ready = false
      worker?.terminate()
    })
    // Ended: asked (stop), its connection closed first; unasked, it failed.
    worker.addEventListener('close', () => fail(failure ?? new Error('the usage writer thread ended')))
    send({ type: 'open', path: opts.path, waitMs: guard.waitMs, spans: opts.spans })
    hold()
  } catch (err) {
    worker = null
    opts.onFailed(err)
  }
  const writer: UsageWriter = {
    onDone: null,
    lastMs: null,
    get running() {
      return ready && worker !== null
    },
    get thread() {
      return worker
    },
    write(batch) {
      writer.lastMs = null
      if (!ready || !worker) return null
      const id = next++
      const p = new Promise<void>((resolve, reject) => waiting.set(id, { batch, resolve, reject }))
      hold()
      send({ type: 'write', id, batch })
      return p
    },
    stop() {
      ready = false
      if (!worker || stopped) return Promise.resolve()
      const ended = new Promise<void>((resolve) => {
        stopped = resolve
      })
      hold()
      send({ type: 'stop' })
      return ended
    },
  }
  return writer
}
