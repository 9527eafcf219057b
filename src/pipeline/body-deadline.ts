/**
 * @module
 * A body read's deadline (`server.body_timeout_s`) without a timer or an abort listener of its own.
 * Per read those were a `setTimeout`, an `addEventListener` on the drain's stop signal, a
 * `Promise.race`, then a `clearTimeout` and a `removeEventListener`: ~5 µs of a plain request's
 * ~270 µs of loop at c=1 (docs/benchmarks/2026-11-29-tail.md, "The plain request, function by
 * function"). Here every read in flight is an entry in one set: one interval, running only while
 * the set holds an entry, fails those past their deadline every `SWEEP_MS`; one listener per stop
 * signal (the process's drain deadline: one signal, listened to once) fails those waiting on it.
 * A deadline so fires between its time and `SWEEP_MS` after it — bodies are given seconds. The
 * interval stops after `IDLE_SWEEPS` sweeps without a read (one a second while reads come).
 */

/** How often the deadlines are looked at, ms: the most a 408 comes after its time. */
export const SWEEP_MS = 100

interface Entry {
  /** performance.now() past which the read is late. */
  at: number
  stop: AbortSignal | undefined
  /** Fails the read: called before `onLate`, so a cancel that settles the read cannot win. */
  fail: (reason: unknown) => void
  late: () => unknown
  onLate: () => void
}

/** Sweeps that found no read before the interval stops: at c=1 the set is empty between requests. */
const IDLE_SWEEPS = 10

const pending = new Set<Entry>()
let sweeper: ReturnType<typeof setInterval> | null = null
let idle = 0
const watched = new WeakSet<AbortSignal>()

function failed(e: Entry, reason: unknown): void {
  pending.delete(e)
  e.fail(reason)
  e.onLate()
}

function sweep(): void {
  if (pending.size === 0) {
    if (++idle < IDLE_SWEEPS) return
    clearInterval(sweeper!)
    sweeper = null
    return
  }
  idle = 0
  const now = performance.now()
  for (const e of pending) if (now >= e.at) failed(e, e.late())
}

/** Fails every read waiting on `stop` with its reason when it aborts. */
function watch(stop: AbortSignal): void {
  watched.add(stop)
  stop.addEventListener(
    'abort',
    () => {
      for (const e of pending) if (e.stop === stop) failed(e, stop.reason)
    },
    { once: true },
  )
}

/**
 * Registers a read that must end within `ms`: past it `fail` gets `late()` (the 408), and `stop`'s
 * reason once it aborts (at once if it has); `onLate` runs after `fail` either way. Returns what
 * ends the watch (the read is over).
 */
export function watchDeadline(
  ms: number,
  late: () => unknown,
  fail: (reason: unknown) => void,
  onLate: () => void,
  stop?: AbortSignal,
): () => void {
  const e: Entry = { at: performance.now() + ms, stop, fail, late, onLate }
  if (stop?.aborted) {
    fail(stop.reason)
    onLate()
    return () => {}
  }
  if (stop && !watched.has(stop)) watch(stop)
  pending.add(e)
  sweeper ??= setInterval(sweep, SWEEP_MS)
  return () => pending.delete(e)
}

/**
 * `reading` within `ms`: its result, or the rejection `watchDeadline` gives (one promise, no race).
 */
export function within<T>(
  reading: Promise<T>,
  ms: number,
  late: () => unknown,
  onLate: () => void,
  stop?: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const done = watchDeadline(ms, late, reject, onLate, stop)
    reading.then(
      (v) => {
        done()
        resolve(v)
      },
      (err) => {
        done()
        reject(err)
      },
    )
  })
}
