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
 * writes on the loop as before.
 */
import type { WindowSpans } from '../../limits/types.ts'
import { StoreBusyError } from '../errors.ts'
import type { Completion } from '../types.ts'
import { isBusy } from './errors.ts'
import type { SqliteGuard } from './guard.ts'
import type { FromThread, ToThread } from './usage-thread.ts'

/**
 * The thread's module. From source it is beside this file. Bundled (`bun run build` compiles, and
 * the tests' spawned gateway bundles, src/main.ts with the thread as a second entry point), every
 * module of the program is in the entry's one file, whose URL `import.meta.url` then is, and the
 * thread's entry sits under the entry points' common folder (src/) as `.js` — on disk beside the
 * bundle, in a compiled binary in Bun's embedded file system (measured, Bun 1.4: `.js` resolves
 * in both, `.ts` only in the binary).
 */
const THREAD_URL = import.meta.url.endsWith('/usage-writer.ts')
  ? new URL('./usage-thread.ts', import.meta.url).href
  : new URL('./store/sqlite/usage-thread.js', import.meta.url).href

interface Waiting {
  resolve: () => void
  reject: (err: unknown) => void
}

export interface UsageWriter {
  /** The batch written by the thread; null while the thread is not running (write it here). */
  write(batch: Completion[]): Promise<void> | null
  /** Closes the thread's connection, then calls `then` (the next connection to close). */
  stop(then: () => void): void
  /** Told after each write the thread ended, written or not: its lock is free. */
  onDone: (() => void) | null
  /** ms the thread's last written transaction took (it held the write lock that long); null: none yet. */
  lastMs: number | null
}

export function startUsageWriter(path: string, guard: SqliteGuard, spans: WindowSpans): UsageWriter {
  let worker: Worker | null = null
  let ready = false
  let next = 0
  const waiting = new Map<number, Waiting>()
  let afterStop: (() => void) | null = null
  /** The thread is gone: what it had not answered is lost, not retried (it may have committed). */
  const fail = () => {
    ready = false
    worker?.terminate()
    worker = null
    for (const w of waiting.values()) w.reject(new Error('the usage writer thread failed'))
    waiting.clear()
    const then = afterStop
    afterStop = null
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
        if (!m.error) {
          writer.lastMs = m.ms ?? null
          guard.wrote()
          w?.resolve()
        } else {
          const err = Object.assign(new Error(m.error.message), { code: m.error.code })
          w?.reject(isBusy(err) ? new StoreBusyError(guard.waitMs) : guard.classify(err))
        }
        writer.onDone?.()
      } else {
        worker = null
        const then = afterStop
        afterStop = null
        then?.()
      }
    }
    worker.addEventListener('error', fail)
    send({ type: 'open', path, waitMs: guard.waitMs, spans })
    // The thread never keeps the process alive: the store's close ends it, and so does exit.
    worker.unref()
  } catch {
    worker = null
  }
  const writer: UsageWriter = {
    onDone: null,
    lastMs: null,
    write(batch) {
      writer.lastMs = null
      if (!ready || !worker) return null
      const id = next++
      const p = new Promise<void>((resolve, reject) => waiting.set(id, { resolve, reject }))
      send({ type: 'write', id, batch })
      return p
    },
    stop(then) {
      ready = false
      if (!worker) return then()
      afterStop = then
      send({ type: 'stop' })
    },
  }
  return writer
}
