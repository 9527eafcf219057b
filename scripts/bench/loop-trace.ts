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

import { heapSize } from 'bun:jsc'
import { Database } from 'bun:sqlite'
import { writeFileSync } from 'node:fs'
import { isMainThread } from 'node:worker_threads'

export type TraceKind = 'sql' | 'timer' | 'fetch' | 'gc'
/** [kind, start (epoch ms), duration (ms), label] */
export type TraceEvent = [TraceKind, number, number, string]

const OUT = process.env.LANE_TRACE_OUT
/**
 * `$LANE_TRACE_GC=1`: sample the heap around every traced call to see collections. Off by default:
 * `heapSize` walks the heap — 1 µs in an empty process, 280 µs at 173 MB (the tokenizer a
 * governed plan loads is 95 MB) — and two calls a statement made every traced write look ten
 * times slower than it is (measured: this lane's first timelines).
 */
const GC = process.env.LANE_TRACE_GC === '1'
const CAP = 2_000_000
const events: TraceEvent[] = []
const now = () => performance.timeOrigin + performance.now()
let lastHeap = GC ? heapSize() : 0

function push(kind: TraceKind, start: number, dur: number, label: string): void {
  if (events.length < CAP) events.push([kind, start, dur, label])
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

function timed<A extends unknown[], R>(kind: TraceKind, label: () => string, fn: (...a: A) => R) {
  return function (this: unknown, ...a: A): R {
    const t0 = now()
    heapSample(t0)
    try {
      return fn.apply(this, a)
    } finally {
      const t1 = now()
      push(kind, t0, t1 - t0, label())
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
for (const m of ['run', 'exec']) {
  const orig = proto[m]!
  proto[m] = function (this: unknown, sql: unknown, ...rest: unknown[]) {
    const out = timed('sql', () => sqlLabel(String(sql)), orig).call(this, sql, ...rest)
    if (AUTOCHECKPOINT && /^PRAGMA synchronous/i.test(String(sql)))
      orig.call(this, `PRAGMA wal_autocheckpoint = ${Number(AUTOCHECKPOINT)}`)
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
  const out = timed('sql', () => label, tx) as typeof tx
  for (const v of ['deferred', 'immediate', 'exclusive']) {
    if (typeof tx[v] === 'function')
      (out as Record<string, unknown>)[v] = timed('sql', () => `${label} ${v}`, tx[v] as () => unknown)
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
      timed('timer', () => label, fn as () => unknown),
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

// The main thread's only: a worker (the checkpoint thread) would write its own over it.
if (OUT && isMainThread) {
  process.on('exit', () => {
    writeFileSync(OUT, JSON.stringify(events))
    writeFileSync(`${OUT}.gc.json`, JSON.stringify(gcFreed))
  })
}
