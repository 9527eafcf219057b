/**
 * @module
 * A preload (`bun --preload scripts/bench/loop-trace.ts src/main.ts serve ...`) that records what
 * the gateway's event loop did, for the c=1 lane's timeline: every bun:sqlite statement and
 * `exec`/`run` (its SQL and duration), every timer callback (`setTimeout`, `setInterval`,
 * `setImmediate`: its function and duration), every upstream `fetch` (call to headers), and, with
 * `$LANE_TRACE_GC=1`, each collection seen as the JS heap shrinking between two of those samples
 * (see GC: costly). Times are wall-clock ms (performance.timeOrigin + now(), as the lane's client
 * stamps its requests), durations ms. Written as JSON to `$LANE_TRACE_OUT` when the process exits.
 * A measuring tool only: the lane's figures come from untraced gateways.
 */

import { dlopen, FFIType, ptr } from 'bun:ffi'
import { heapSize } from 'bun:jsc'
import { Database } from 'bun:sqlite'
import { writeFileSync } from 'node:fs'
import { isMainThread } from 'node:worker_threads'

export type TraceKind = 'sql' | 'timer' | 'fetch' | 'gc'
/**
 * [kind, start (epoch ms), duration (ms), label] and, with `$LANE_TRACE_CPU=1`, inside it: the
 * thread's CPU ms, its voluntary switches (it blocked: a system call waited), involuntary ones (it
 * was preempted: the machine's load) and minor page faults.
 */
export type TraceEvent = [TraceKind, number, number, string, number?, number?, number?, number?]

const OUT = process.env.LANE_TRACE_OUT
/**
 * `$LANE_TRACE_GC=1`: sample the heap around every traced call to see collections. Off by default:
 * `heapSize` walks the heap — 1 µs in an empty process, 280 µs at 173 MB (the tokenizer a
 * governed plan loads is 95 MB) — and two calls a statement made every traced write look ten
 * times slower than it is (measured: this lane's first timelines).
 */
const GC = process.env.LANE_TRACE_GC === '1'
/**
 * `$LANE_TRACE_CPU=1`: inside each transaction and timer callback, the loop thread's own CPU time
 * (clock_gettime(CLOCK_THREAD_CPUTIME_ID)) and its switches and faults (getrusage(RUSAGE_THREAD)),
 * through bun:ffi, ~2 µs a sample: what the work cost, which a loaded machine's preemption does not
 * inflate as it does the wall-clock duration, and why a long one was off its core.
 */
type Sample = [cpuMs: number, voluntary: number, involuntary: number, minorFaults: number]
const threadSample: (() => Sample) | null =
  process.env.LANE_TRACE_CPU === '1'
    ? (() => {
        const lib = dlopen('libc.so.6', {
          clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
          getrusage: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
        })
        const ts = new BigInt64Array(2)
        const at = ptr(ts)
        // struct rusage on x86-64 Linux: two timevals, then 14 longs (ru_minflt the 5th, ru_nvcsw
        // the 13th, ru_nivcsw the 14th): 18 longs.
        const ru = new BigInt64Array(18)
        const ruAt = ptr(ru)
        const CLOCK_THREAD_CPUTIME_ID = 3
        const RUSAGE_THREAD = 1
        return (): Sample => {
          lib.symbols.clock_gettime(CLOCK_THREAD_CPUTIME_ID, at)
          lib.symbols.getrusage(RUSAGE_THREAD, ruAt)
          return [Number(ts[0]) * 1e3 + Number(ts[1]) / 1e6, Number(ru[16]), Number(ru[17]), Number(ru[8])]
        }
      })()
    : null
const CAP = 2_000_000
const events: TraceEvent[] = []
const now = () => performance.timeOrigin + performance.now()
let lastHeap = GC ? heapSize() : 0

function push(kind: TraceKind, start: number, dur: number, label: string, inside?: Sample): void {
  if (events.length < CAP)
    events.push(inside ? [kind, start, dur, label, ...inside] : [kind, start, dur, label])
}

/**
 * A heap smaller than at the last sample: a collection ran in between. Its own duration is not
 * known (it shows as time no traced work covers), so it is recorded as an instant at the sample
 * that saw it, with the MiB freed in `gcFreed`.
 */
function heapSample(at: number): void {
  if (!GC) return
  const h = heapSize()
  if (h < lastHeap) {
    push('gc', at, 0, 'heap shrank (a collection ran)')
    gcFreed.push([at, lastHeap - h])
  }
  lastHeap = h
}
/** [epoch ms, bytes freed] of each collection seen. */
const gcFreed: [number, number][] = []
/** [epoch ms, ms held] of each usage writer thread's transaction answered (written to `$OUT.writer.json`). */
const writerHeld: [number, number][] = []

function timed<A extends unknown[], R>(
  kind: TraceKind,
  label: () => string,
  fn: (...a: A) => R,
  sample: (() => Sample) | null = null,
) {
  return function (this: unknown, ...a: A): R {
    const c0 = sample?.()
    const t0 = now()
    heapSample(t0)
    try {
      return fn.apply(this, a)
    } finally {
      const t1 = now()
      const c1 = c0 && sample!()
      push(kind, t0, t1 - t0, label(), c0 && c1 ? (c1.map((x, i) => x - c0[i]!) as Sample) : undefined)
      heapSample(t1)
    }
  }
}

const sqlLabel = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 80)

function wrapStatement<S extends object>(stmt: S, sql: string): S {
  const s = stmt as Record<string, unknown>
  for (const m of ['run', 'get', 'all', 'values']) {
    const orig = s[m]
    if (typeof orig === 'function') s[m] = timed('sql', () => sqlLabel(sql), orig as () => unknown)
  }
  return stmt
}

const proto = Database.prototype as unknown as Record<string, (...a: unknown[]) => unknown>
for (const m of ['query', 'prepare']) {
  const orig = proto[m]!
  proto[m] = function (this: unknown, sql: unknown, ...rest: unknown[]) {
    return wrapStatement(orig.call(this, sql, ...rest) as object, String(sql))
  }
}
/** `$LANE_TRACE_AUTOCHECKPOINT`: the connection's wal_autocheckpoint (pages), to see what checkpoints cost. */
const AUTOCHECKPOINT = process.env.LANE_TRACE_AUTOCHECKPOINT
/**
 * `$LANE_TRACE_PRAGMAS`: `name=value` pairs split by `;` (`mmap_size=268435456;cache_size=-8000`),
 * run on every connection of the process (the loop's, the writer and checkpoint threads': the
 * preload runs in each thread) right after its `synchronous`, to try a pragma on the gateway as it is.
 */
const PRAGMAS = (process.env.LANE_TRACE_PRAGMAS ?? '')
  .split(';')
  .filter((p) => /^[a-z_]+=-?\d+$/.test(p))
  .map((p) => `PRAGMA ${p.replace('=', ' = ')}`)
for (const m of ['run', 'exec']) {
  const orig = proto[m]!
  proto[m] = function (this: unknown, sql: unknown, ...rest: unknown[]) {
    const out = timed('sql', () => sqlLabel(String(sql)), orig).call(this, sql, ...rest)
    if (/^PRAGMA synchronous/i.test(String(sql))) {
      if (AUTOCHECKPOINT) orig.call(this, `PRAGMA wal_autocheckpoint = ${Number(AUTOCHECKPOINT)}`)
      for (const p of PRAGMAS) orig.call(this, p)
    }
    return out
  }
}

/** The first frame outside this file: where the timer was set (about 10 µs a call, traced runs only). */
function callSite(): string {
  const lines = (new Error().stack ?? '').split('\n').slice(2)
  const line = lines.find((l) => !l.includes('loop-trace.ts')) ?? ''
  const m = /\(?([^()\s]+):(\d+):\d+\)?$/.exec(line.trim())
  return m ? `${m[1]!.replace(/^.*\/(src|node_modules)\//, '$1/')}:${m[2]}` : line.trim().slice(0, 60)
}
// A transaction's BEGIN and COMMIT run inside bun:sqlite (a WAL checkpoint runs in the COMMIT that
// crosses wal_autocheckpoint): time the whole transaction, named by where it was made.
const origTx = proto.transaction!
proto.transaction = function (this: unknown, fn: unknown) {
  const label = `transaction (${callSite()})`
  const tx = origTx.call(this, fn) as Record<string, unknown> & ((...a: unknown[]) => unknown)
  const out = timed('sql', () => label, tx, threadSample) as typeof tx
  for (const v of ['deferred', 'immediate', 'exclusive']) {
    if (typeof tx[v] === 'function')
      (out as Record<string, unknown>)[v] = timed(
        'sql',
        () => `${label} ${v}`,
        tx[v] as () => unknown,
        threadSample,
      )
  }
  return out
}

const fnLabel = (fn: unknown) => (fn as { name?: string }).name || 'anonymous'
const g = globalThis as unknown as Record<string, (...a: unknown[]) => unknown>
for (const name of ['setTimeout', 'setInterval', 'setImmediate']) {
  const orig = g[name]!
  g[name] = (fn: unknown, ...rest: unknown[]) => {
    if (typeof fn !== 'function') return orig(fn, ...rest)
    const label = `${name}: ${fnLabel(fn)} (${callSite()})`
    // The limiter's retry is set when an admission met the write lock: an instant at the set, so
    // a lock met is counted even when the retry is woken early and its timer never fires.
    if (label.includes('src/store/sqlite/admissions.ts')) push('timer', now(), 0, `set: ${label}`)
    return orig(
      timed('timer', () => label, fn as () => unknown, threadSample),
      ...rest,
    )
  }
}

const origFetch = globalThis.fetch
globalThis.fetch = Object.assign(async (...a: Parameters<typeof fetch>) => {
  const t0 = now()
  try {
    return await origFetch(...a)
  } finally {
    push('fetch', t0, now() - t0, 'upstream fetch → headers')
  }
}, origFetch)

// A batch posted to the usage writer thread (usage-writer.ts): an instant, so the admission that
// follows another connection's commit (its page cache dropped) can be told from the rest.
if (isMainThread) {
  const wproto = Worker.prototype as unknown as { postMessage: (m: unknown, ...r: unknown[]) => void }
  const post = wproto.postMessage
  wproto.postMessage = function (this: unknown, m: unknown, ...r: unknown[]) {
    const type = (m as { type?: unknown } | null)?.type
    if (type === 'write') push('timer', now(), 0, 'post: usage writer write')
    return post.call(this, m, ...r)
  }
  // Its answer: an instant, and the ms the thread's transaction held the lock in `writerHeld`.
  const on = Object.getOwnPropertyDescriptor(Worker.prototype, 'onmessage')!
  Object.defineProperty(Worker.prototype, 'onmessage', {
    ...on,
    set(this: Worker, fn: ((e: MessageEvent) => void) | null) {
      on.set!.call(
        this,
        fn &&
          ((e: MessageEvent) => {
            const d = e.data as { type?: unknown; ms?: unknown } | null
            if (d?.type === 'done') {
              const at = now()
              push('timer', at, 0, 'done: usage writer write')
              writerHeld.push([at, Number(d.ms ?? 0)])
            }
            fn.call(this, e)
          }),
      )
    },
  })
}

// The main thread's only: a worker (the checkpoint thread) would write its own over it.
if (OUT && isMainThread) {
  process.on('exit', () => {
    writeFileSync(OUT, JSON.stringify(events))
    writeFileSync(`${OUT}.gc.json`, JSON.stringify(gcFreed))
    writeFileSync(`${OUT}.writer.json`, JSON.stringify(writerHeld))
  })
}
