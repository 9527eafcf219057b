/**
 * @module
 * A preload (`bun --preload scripts/bench/flush-probe.ts src/main.ts serve …`, on only with
 * `$FLUSH_PROBE_OUT` set) that takes apart every admission flush of a served gateway (issue 46,
 * stop 63): each call of the limiter's `admitMany` — the group commit's `BEGIN IMMEDIATE`
 * transaction, or its SQLITE_BUSY — timed on the wall clock and split by the loop thread's
 * schedstat (`/proc/<pid>/task/<tid>/schedstat`: ns on a core, ns runnable but not running) and
 * its switches (getrusage RUSAGE_THREAD: voluntary = it blocked in a system call or a futex,
 * involuntary = it was preempted); the rest of the wall time is blocked (I/O, futex). Around each
 * call every other thread of the process is read too (CPU and run-queue ns, by its name; the
 * usage writer and checkpoint threads named by the URL their worker was made from), so a slow flush can
 * be put on what ran instead of the loop: its own helper threads, or other processes. The reads of the other threads sit outside the timed span.
 * Written as JSON to `$FLUSH_PROBE_OUT` at exit; `c1-flush-causes.ts` reads it.
 */
import { dlopen, FFIType, ptr } from 'bun:ffi'
import { closeSync, openSync, readdirSync, readFileSync, readSync, writeFileSync } from 'node:fs'
import { setPriority } from 'node:os'
import { dirname, join } from 'node:path'
import { isMainThread } from 'node:worker_threads'

const OUT = process.env.FLUSH_PROBE_OUT
/**
 * `$FLUSH_PROBE_NICE`: `name=n,…` — the threads of those names (comm, or the worker's role) given
 * that nice value when first seen (an experiment on the gateway as it is: which threads, niced,
 * stop taking the loop's core).
 */
const NICE = new Map(
  (process.env.FLUSH_PROBE_NICE ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=') as [string, string])
    .map(([k, v]) => [k, Number(v)] as const),
)

/**
 * One `admitMany` call: [start (epoch ms), wall µs, loop CPU µs, loop run-queue µs, voluntary
 * switches, involuntary switches, busy (1: SQLITE_BUSY, nothing decided), admissions in it,
 * other threads: [name, CPU µs, run-queue µs] of each that ran, then at the start: the loop's
 * and the usage writer's CPU and run-queue µs so far (a SQLITE_BUSY wait's split, first call to
 * commit)].
 */
export type FlushSample = [
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  [string, number, number][],
  [number, number, number, number],
]

if (OUT && isMainThread) {
  const pid = process.pid
  /** tid → role of the worker threads this process made (a worker's thread exists once `new Worker` returns). */
  const roles = new Map<string, string>()
  const tids = () => new Set(readdirSync(`/proc/${pid}/task`))
  globalThis.Worker = new Proxy(Worker, {
    construct(target, args: [string | URL, ...unknown[]]) {
      const before = tids()
      const w = Reflect.construct(target, args)
      const url = String(args[0])
      const role = url.startsWith('blob:')
        ? 'checkpoint thread'
        : url.includes('usage-thread')
          ? 'usage writer'
          : 'worker'
      for (const tid of tids()) if (!before.has(tid)) roles.set(tid, role)
      return w
    },
  })
  const lib = dlopen('libc.so.6', {
    getrusage: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  })
  const ru = new BigInt64Array(18)
  const ruAt = ptr(ru)
  const buf = Buffer.alloc(128)
  /** [CPU ns, run-queue ns] from an open schedstat file (pread at 0 reads it afresh). */
  const sched = (fd: number): [number, number] => {
    const n = readSync(fd, buf, 0, buf.length, 0)
    const f = buf.toString('latin1', 0, n).split(' ')
    return [Number(f[0]), Number(f[1])]
  }
  const loopFd = openSync(`/proc/${pid}/task/${pid}/schedstat`, 'r')
  /** The other threads: tid → [fd, name]; refreshed every 256 calls (threads come and go rarely). */
  let others = new Map<string, [number, string]>()
  let calls = 0
  const refresh = () => {
    const next = new Map<string, [number, string]>()
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      if (tid === String(pid)) continue
      const old = others.get(tid)
      if (old) {
        next.set(tid, old)
        continue
      }
      try {
        const name = roles.get(tid) ?? readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
        next.set(tid, [openSync(`/proc/${pid}/task/${tid}/schedstat`, 'r'), name])
        const n = NICE.get(name)
        if (n !== undefined) setPriority(Number(tid), n)
      } catch {}
    }
    for (const [tid, [fd]] of others) if (!next.has(tid)) closeSync(fd)
    others = next
  }
  const readOthers = (): Map<string, [number, number]> => {
    const m = new Map<string, [number, number]>()
    for (const [tid, [fd]] of others) {
      try {
        m.set(tid, sched(fd))
      } catch {}
    }
    return m
  }
  const samples: FlushSample[] = []
  const { LimiterQueries } = (await import(join(dirname(Bun.main), 'store', 'sqlite', 'limiter.ts'))) as {
    LimiterQueries: { prototype: { admitMany: (inputs: unknown[]) => unknown } }
  }
  const admitMany = LimiterQueries.prototype.admitMany
  LimiterQueries.prototype.admitMany = function (this: unknown, inputs: unknown[]) {
    if (calls++ % 256 === 0) refresh()
    const o0 = readOthers()
    let w0: [number, number] = [0, 0]
    for (const [tid, [, name]] of others) if (name === 'usage writer') w0 = o0.get(tid) ?? w0
    lib.symbols.getrusage(1, ruAt)
    const v0 = Number(ru[16])
    const n0 = Number(ru[17])
    const s0 = sched(loopFd)
    const t0 = performance.now()
    let busy = 0
    try {
      return admitMany.call(this, inputs)
    } catch (err) {
      if (String((err as { code?: unknown })?.code ?? '').startsWith('SQLITE_BUSY')) busy = 1
      throw err
    } finally {
      const t1 = performance.now()
      const s1 = sched(loopFd)
      lib.symbols.getrusage(1, ruAt)
      const v1 = Number(ru[16])
      const n1 = Number(ru[17])
      const o1 = readOthers()
      const ran: [string, number, number][] = []
      for (const [tid, b] of o1) {
        const a = o0.get(tid)
        if (!a) continue
        const cpu = (b[0] - a[0]) / 1000
        const rq = (b[1] - a[1]) / 1000
        if (cpu > 0 || rq > 0) ran.push([others.get(tid)![1], Math.round(cpu), Math.round(rq)])
      }
      samples.push([
        performance.timeOrigin + t0,
        Math.round((t1 - t0) * 1000),
        Math.round((s1[0] - s0[0]) / 1000),
        Math.round((s1[1] - s0[1]) / 1000),
        v1 - v0,
        n1 - n0,
        busy,
        inputs.length,
        ran,
        [
          Math.round(s0[0] / 1000),
          Math.round(s0[1] / 1000),
          Math.round(w0[0] / 1000),
          Math.round(w0[1] / 1000),
        ],
      ])
    }
  }
  process.on('exit', () => writeFileSync(OUT, JSON.stringify(samples)))
}
