/**
 * @module
 * The usage flush at one request at a time (issue 46, sixth pass): what the flush's transaction
 * (src/store/sqlite/usage.ts `completeTx`) costs on a served gateway, statement by statement, in
 * the c=1 part only. A gateway under loop-trace.ts (one per checkout: this one, `--baseline DIR`)
 * is filled first to the lane's volume (`--fill` requests in closed loop at c8, half stream, as the
 * lane's warm-up) — that part's flushes are not counted — then takes `--requests` one at a time
 * per block (plain non-stream, governed non-stream, governed stream in turn), the gateways in
 * alternating blocks. Per gateway it reports the flush transactions that started in the c=1 part:
 * how many, how many over 1 ms per 1,000 requests, mean and longest, the outcomes a piece (the log
 * INSERTs inside it), and the mean ms a piece of each statement inside it — the remainder is the
 * transaction's own BEGIN and COMMIT (the WAL write). Counts are what it is for: the ms move with
 * the machine's load, say the load beside them.
 *
 * `--c64 N`: then N requests a block in closed loop at c64 (plain key, half stream), the gateways
 * in alternating blocks (`--c64-blocks`, 4): req/s, the serving thread's and the whole process's
 * CPU µs a request (/proc), the admission batches retried on a timer.
 *
 * bun scripts/bench/c1-flush.ts [--requests N] [--blocks B] [--fill N] [--baseline DIR | .] [--pragmas 'k=v;k=v'] [--c64 N]
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TraceEvent } from './loop-trace.ts'
import { FULL_MODEL, type Gateway, REPO, startGateway, startMocks } from './processes.ts'
import { meteredKey } from './tokens.ts'
import { chatTarget, quantile, sortedCopy, type Target } from './workload.ts'

async function one(t: Target, stream: boolean): Promise<void> {
  const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body })
  if (stream)
    for await (const _ of res.body!) {
    }
  else await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`status ${res.status}`)
}

/** What a flush statement is, by its SQL's start (loop-trace.ts labels a statement by its text). */
function kindOf(label: string): string {
  if (label.startsWith('INSERT INTO requests')) return 'log INSERT (row + 5 indexes)'
  if (/usage_hourly|usage_daily/.test(label)) return 'rollups (hourly, daily)'
  if (/usage_minute/.test(label)) return 'per-minute counters'
  if (/admissions|limit_scopes|limit_sums|account_state|charges/.test(label)) return 'reserve.settle'
  return `other: ${label.slice(0, 50)}`
}

/** Admission transactions: how many, mean wall ms, how many over 1 ms, mean and p99 CPU ms of the loop thread. */
interface AdmitStat {
  n: number
  meanMs: number
  over1ms: number
  cpuMeanMs: number
  cpuP99Ms: number
  /** How many blocked in a system call (a voluntary switch), were preempted; minor faults a transaction. */
  blocked: number
  preempted: number
  faults: number
}

export interface FlushReport {
  requests: number
  pieces: number
  over1msPer1000: number
  meanMs: number
  p50Ms: number
  maxMs: number
  outcomesPerPiece: number
  /** The admission batches that met the write lock (another connection's write) and were set to retry. */
  admissionRetries: number
  /** Any traced work on the loop (statements, transactions, timers) over 1 ms, per 1,000 requests. */
  loopOver1msPer1000: number
  /** Mean ms from a retry's set to the admission transaction after it. */
  retryWaitMs: number
  /** Loop work over 1 ms by what it was: label → count. */
  longBy: Record<string, number>
  /** Of those, the ones whose thread CPU (`$LANE_TRACE_CPU`) was under half the wall time: the
   * loop was off its core (preempted, or blocked in a system call), not working. */
  longOffCpuBy: Record<string, number>
  /** Of those, the ones that blocked (a voluntary switch: a system call waited) / were preempted. */
  longBlockedBy: Record<string, number>
  longPreemptedBy: Record<string, number>
  /** Mean ms a piece per kind of statement; `BEGIN + COMMIT` is the rest of the transaction. */
  parts: Record<string, number>
  /** The admissions' own transactions on the loop (limiter.ts): how many, mean ms, over 1 ms per 1,000 requests. */
  admits: number
  admitMeanMs: number
  admitOver1msPer1000: number
  /** The same of the first admission after each batch posted to the writer thread (whose commit
   * drops the loop connection's page cache), and of the rest. */
  afterCommit: AdmitStat
  others: AdmitStat
  /** The writer thread's transactions answered (per 1,000 requests) and the ms each held the lock. */
  writerPer1000: number
  writerMeanMs: number
  writerP99Ms: number
}

const longLabel = (e: TraceEvent) => e[3].replace(/:\d+\)/, ')').slice(0, 70)
function countBy(xs: TraceEvent[], when: (e: TraceEvent) => boolean): Record<string, number> {
  const m: Record<string, number> = {}
  for (const e of xs) if (when(e)) m[longLabel(e)] = (m[longLabel(e)] ?? 0) + 1
  return m
}

/** The flush transactions that started inside [from, to] (epoch ms), and the statements inside each. */
export function flushReport(
  events: TraceEvent[],
  from: number,
  to: number,
  requests: number,
  /** [epoch ms, ms the lock was held] of the writer thread's answers (loop-trace.ts `$OUT.writer.json`). */
  writerHeld: [number, number][] = [],
): FlushReport {
  const sorted = events.filter((e) => e[1] >= from && e[1] <= to).sort((a, b) => a[1] - b[1])
  const txs = sorted.filter(
    (e) => e[0] === 'sql' && e[3].startsWith('transaction (src/store/sqlite/usage.ts'),
  )
  const parts: Record<string, number> = {}
  let rows = 0
  for (const tx of txs) {
    let inside = 0
    for (const e of sorted) {
      if (e[1] < tx[1] || e[1] > tx[1] + tx[2] || e === tx || e[0] !== 'sql') continue
      const k = kindOf(e[3])
      parts[k] = (parts[k] ?? 0) + e[2]
      inside += e[2]
      if (k.startsWith('log INSERT')) rows++
    }
    parts['BEGIN + COMMIT (the rest)'] = (parts['BEGIN + COMMIT (the rest)'] ?? 0) + tx[2] - inside
  }
  for (const k of Object.keys(parts)) parts[k] = parts[k]! / Math.max(1, txs.length)
  const ms = sortedCopy(txs.map((t) => t[2]))
  const sets = sorted.filter((e) => e[0] === 'timer' && /^set: setTimeout: .*admissions\.ts/.test(e[3]))
  const retries = sets.length
  // How long each waited: from the retry's set to the next admission transaction's start.
  const admits = sorted.filter(
    (e) => e[0] === 'sql' && e[3].startsWith('transaction (src/store/sqlite/limiter.ts'),
  )
  const waits = sets.map((x) => {
    const next = admits.find((a) => a[1] > x[1])
    return next ? next[1] - x[1] : 0
  })
  const long = sorted.filter((e) => e[0] !== 'fetch' && e[0] !== 'gc' && e[2] > 1)
  const posts = sorted.filter((e) => e[0] === 'timer' && e[3] === 'post: usage writer write')
  const first = new Set<TraceEvent>()
  for (const p of posts) {
    const a = admits.find((x) => x[1] > p[1])
    if (a) first.add(a)
  }
  const stat = (xs: TraceEvent[]): AdmitStat => {
    const cpu = sortedCopy(xs.map((x) => x[4] ?? 0))
    return {
      n: xs.length,
      meanMs: xs.reduce((a, b) => a + b[2], 0) / Math.max(1, xs.length),
      over1ms: xs.filter((x) => x[2] > 1).length,
      cpuMeanMs: cpu.reduce((a, b) => a + b, 0) / Math.max(1, cpu.length),
      cpuP99Ms: quantile(cpu, 0.99),
      blocked: xs.filter((x) => (x[5] ?? 0) > 0).length,
      preempted: xs.filter((x) => (x[6] ?? 0) > 0).length,
      faults: xs.reduce((a, b) => a + (b[7] ?? 0), 0) / Math.max(1, xs.length),
    }
  }
  const done = sortedCopy(writerHeld.filter(([at]) => at >= from && at <= to).map(([, ms]) => ms))
  return {
    writerPer1000: (done.length * 1000) / Math.max(1, requests),
    writerMeanMs: done.reduce((a, b) => a + b, 0) / Math.max(1, done.length),
    writerP99Ms: quantile(done, 0.99),
    afterCommit: stat(admits.filter((a) => first.has(a))),
    others: stat(admits.filter((a) => !first.has(a))),
    admits: admits.length,
    admitMeanMs: admits.reduce((a, b) => a + b[2], 0) / Math.max(1, admits.length),
    admitOver1msPer1000: (admits.filter((a) => a[2] > 1).length * 1000) / Math.max(1, requests),
    admissionRetries: retries,
    retryWaitMs: waits.reduce((a, b) => a + b, 0) / Math.max(1, waits.length),
    longBy: long.reduce<Record<string, number>>((m, e) => {
      const k = e[3].replace(/:\d+\)/, ')').slice(0, 70)
      m[k] = (m[k] ?? 0) + 1
      return m
    }, {}),
    longOffCpuBy: countBy(long, (e) => e[4] !== undefined && e[4] < e[2] / 2),
    longBlockedBy: countBy(long, (e) => (e[5] ?? 0) > 0),
    longPreemptedBy: countBy(long, (e) => (e[6] ?? 0) > 0),
    loopOver1msPer1000: (long.length * 1000) / Math.max(1, requests),
    requests,
    pieces: txs.length,
    over1msPer1000: (ms.filter((x) => x > 1).length * 1000) / Math.max(1, requests),
    meanMs: ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length),
    p50Ms: quantile(ms, 0.5),
    maxMs: ms.at(-1) ?? 0,
    outcomesPerPiece: rows / Math.max(1, txs.length),
    parts,
  }
}

interface C64Block {
  at: [number, number]
  rps: number
  /** CPU µs a request of the serving thread, and of the whole process (every thread). */
  loopUs: number
  processUs: number
}

/** ns on a core: the serving (main) thread of `pid`, and all its threads. */
function cpuNs(pid: number): { loop: number; all: number } {
  const of = (tid: string) => Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
  let all = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      all += of(tid)
    } catch {}
  }
  return { loop: of(String(pid)), all }
}

/** The serving thread's read system calls so far (/proc: read, pread, readv — a page SQLite reads
 * from its files without a mapping is one; socket reads go through recv, not counted here). */
function loopReads(pid: number): number {
  const io = readFileSync(`/proc/${pid}/task/${pid}/io`, 'utf8')
  return Number(/syscr: (\d+)/.exec(io)?.[1] ?? 0)
}

/** Every thread's CPU ns and read calls so far, by tid (its name beside). */
function threads(pid: number): Map<string, { name: string; ns: number; reads: number }> {
  const out = new Map<string, { name: string; ns: number; reads: number }>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const at = `/proc/${pid}/task/${tid}`
      out.set(tid, {
        name: readFileSync(`${at}/comm`, 'utf8').trim(),
        ns: Number(readFileSync(`${at}/schedstat`, 'utf8').split(' ')[0]),
        reads: Number(/syscr: (\d+)/.exec(readFileSync(`${at}/io`, 'utf8'))?.[1] ?? 0),
      })
    } catch {}
  }
  return out
}

const KIND_NAMES = ['plain', 'governed', 'governed stream (to the end)']

async function closed(targets: Target[], n: number, c: number): Promise<void> {
  let i = 0
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (i < n) {
        const k = i++
        const t = targets[k % targets.length]!
        await one(t, k % 2 === 1).catch(() => {})
      }
    }),
  )
}

if (import.meta.main) {
  const argv = process.argv.slice(2)
  const arg = (name: string) => {
    const i = argv.indexOf(name)
    return i >= 0 ? argv[i + 1] : undefined
  }
  const N = Number(arg('--requests') ?? 500)
  const BLOCKS = Number(arg('--blocks') ?? 4)
  const FILL = Number(arg('--fill') ?? 20_000)
  // `--baseline .`: this checkout again, e.g. against itself with `--pragmas` on one side only.
  const baseline = arg('--baseline') === '.' ? REPO : arg('--baseline')
  /** `--pragmas 'mmap_size=N;cache_size=N'`: run on this checkout's connections only (loop-trace.ts). */
  const pragmas = arg('--pragmas') ?? ''
  const C64 = Number(arg('--c64') ?? 0)
  const C64_BLOCKS = C64 ? Number(arg('--c64-blocks') ?? 4) : 0
  const mocks = await startMocks(20)
  type G = {
    name: string
    gw: Gateway
    governed: string
    trace: string
    windows: [number, number][]
    n: number
    reads: number
    /** Per thread over the c=1 blocks: CPU ns and read calls. */
    perThread: Map<string, { name: string; ns: number; reads: number }>
    mapped?: number
    us: Record<string, number[]>
    c64: C64Block[]
  }
  const gws: G[] = []
  try {
    for (const [name, root] of [['now', undefined], ...(baseline ? [['before', baseline]] : [])] as const) {
      const dir = mkdtempSync(join(tmpdir(), `c1-flush-${name}-`))
      const trace = join(dir, 'trace.json')
      const gw = await startGateway({ dir }, mocks, {
        binary: false,
        env: {
          BUN_CONFIG_MAX_HTTP_REQUESTS: '4096',
          LANE_TRACE_OUT: trace,
          LANE_TRACE_CPU: '1',
          LANE_TRACE_PRAGMAS: name === 'now' ? pragmas : '',
        },
        bunFlags: ['--preload', join(REPO, 'scripts', 'bench', 'loop-trace.ts')],
        root,
      })
      gws.push({
        name,
        gw,
        governed: await meteredKey(gw, dir, false, 'bench-lane'),
        trace,
        windows: [],
        n: 0,
        reads: 0,
        perThread: new Map(),
        us: {},
        c64: [],
      })
    }
    const kinds = (g: G) =>
      [
        [chatTarget(g.gw.url, 'mock/bench', false, g.gw.key), false],
        [chatTarget(g.gw.url, `mock/${FULL_MODEL}`, false, g.governed), false],
        [chatTarget(g.gw.url, `mock/${FULL_MODEL}`, true, g.governed), true],
      ] as const
    for (const g of gws) {
      const k = kinds(g)
      // Half stream, as the lane's warm-up: index k%2 picks the stream target.
      await closed([k[0][0], k[2][0], k[1][0], k[2][0]], FILL, 8)
    }
    await Bun.sleep(500)
    for (let b = 0; b < BLOCKS; b++) {
      for (const g of b % 2 ? [...gws].reverse() : gws) {
        const t0 = performance.timeOrigin + performance.now()
        const r0 = loopReads(g.gw.pid)
        const th0 = threads(g.gw.pid)
        for (const [k, [t, stream]] of kinds(g).entries()) {
          const name = KIND_NAMES[k]!
          g.us[name] ??= []
          const us = g.us[name]!
          for (let i = 0; i < N; i++) {
            const a = performance.now()
            await one(t, stream)
            us.push((performance.now() - a) * 1000)
          }
        }
        g.windows.push([t0, performance.timeOrigin + performance.now()])
        g.reads += loopReads(g.gw.pid) - r0
        for (const [tid, x] of threads(g.gw.pid)) {
          const a = th0.get(tid) ?? { ns: 0, reads: 0 }
          const sum = g.perThread.get(tid) ?? { name: x.name, ns: 0, reads: 0 }
          sum.ns += x.ns - a.ns
          sum.reads += x.reads - a.reads
          g.perThread.set(tid, sum)
        }
        g.n += 3 * N
      }
    }
    // c64 closed loop, plain key, half stream: the loop thread's CPU a request (what the write
    // moved off it, and what the thread's lock costs the admissions), in alternating blocks.
    for (let b = 0; b < C64_BLOCKS; b++) {
      for (const g of b % 2 ? [...gws].reverse() : gws) {
        const k = kinds(g)
        const t0 = performance.timeOrigin + performance.now()
        const cpu0 = cpuNs(g.gw.pid)
        const a = performance.now()
        await closed([k[0][0], chatTarget(g.gw.url, 'mock/bench', true, g.gw.key)], C64, 64)
        const s = (performance.now() - a) / 1000
        const cpu1 = cpuNs(g.gw.pid)
        g.c64.push({
          at: [t0, performance.timeOrigin + performance.now()],
          rps: C64 / s,
          loopUs: (cpu1.loop - cpu0.loop) / 1000 / C64,
          processUs: (cpu1.all - cpu0.all) / 1000 / C64,
        })
      }
    }
    // How many connections map the database file itself (`mmap_size` > 0; the -shm is always mapped).
    for (const g of gws) {
      const maps = readFileSync(`/proc/${g.gw.pid}/maps`, 'utf8').split('\n')
      g.mapped = maps.filter((l) => l.endsWith('switchyard.db')).length
    }
  } finally {
    for (const g of gws) await g.gw.stop()
    await mocks.stop()
  }
  for (const g of gws) {
    const events = JSON.parse(readFileSync(g.trace, 'utf8')) as TraceEvent[]
    const held = JSON.parse(readFileSync(`${g.trace}.writer.json`, 'utf8')) as [number, number][]
    const inside = (at: number) => g.windows.some(([a, b]) => at >= a && at <= b)
    const per = g.windows.map(([a, b]) => flushReport(events, a, b, g.n / g.windows.length, held))
    const all = flushReport(
      events.filter((e) => inside(e[1])),
      -Infinity,
      Infinity,
      g.n,
      held.filter(([at]) => inside(at)),
    )
    const r = (x: number) => x.toFixed(2)
    console.log(
      `${g.name}${g.name === 'now' && pragmas ? ` (${pragmas})` : ''}: ${g.n} c=1 requests, ${all.pieces} flush pieces of ${all.outcomesPerPiece.toFixed(1)} outcomes; ` +
        `over 1 ms ${all.over1msPer1000.toFixed(2)} per 1,000 requests (blocks ${per.map((p) => p.over1msPer1000.toFixed(1)).join(' ')}); ` +
        `mean ${r(all.meanMs)} ms, p50 ${r(all.p50Ms)}, longest ${r(all.maxMs)} ms`,
    )
    const lat = Object.entries(g.us)
      .map(([k, v]) => {
        const x = sortedCopy(v)
        return `${k} p50 ${Math.round(quantile(x, 0.5))} p99 ${Math.round(quantile(x, 0.99))} µs`
      })
      .join('; ')
    console.log(
      `    admissions that met the lock ${all.admissionRetries}, waited ${all.retryWaitMs.toFixed(2)} ms on average; loop work over 1 ms ${all.loopOver1msPer1000.toFixed(2)} per 1,000 requests; ${lat}`,
    )
    console.log(
      `    admission transactions ${all.admits}, mean ${(all.admitMeanMs * 1000).toFixed(0)} µs, over 1 ms ${all.admitOver1msPer1000.toFixed(2)} per 1,000 requests (blocks ${per.map((p) => p.admitOver1msPer1000.toFixed(1)).join(' ')}); serving thread's read calls ${(g.reads / g.n).toFixed(2)} a request; the database file mapped ${g.mapped ?? '?'} times`,
    )
    const st = (x: FlushReport['others']) =>
      `${x.n} (mean ${(x.meanMs * 1000).toFixed(0)} µs, ${x.over1ms} over 1 ms; loop CPU mean ${(x.cpuMeanMs * 1000).toFixed(0)} µs, p99 ${(x.cpuP99Ms * 1000).toFixed(0)}; blocked ${x.blocked}, preempted ${x.preempted}, ${x.faults.toFixed(2)} minor faults each)`
    console.log(
      `    writer thread: ${all.writerPer1000.toFixed(2)} transactions per 1,000 requests, lock held mean ${all.writerMeanMs.toFixed(2)} ms, p99 ${all.writerP99Ms.toFixed(2)} ms`,
    )
    const top = [...g.perThread.entries()].sort((a, b) => b[1].ns - a[1].ns).slice(0, 5)
    const who = (tid: string, name: string) => (tid === String(g.gw.pid) ? 'loop' : name)
    console.log(
      `    threads, CPU µs / read calls a request: ${top
        .map(
          ([tid, x]) =>
            `${who(tid, x.name)} ${(x.ns / 1000 / g.n).toFixed(1)} / ${(x.reads / g.n).toFixed(2)}`,
        )
        .join('; ')}`,
    )
    console.log(
      `    admissions first after a batch posted to the writer ${st(all.afterCommit)}; the rest ${st(all.others)}`,
    )
    for (const [k, v] of Object.entries(all.longBy)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6))
      console.log(
        `    over 1 ms: ${v} × ${k} (off the core most of it ${all.longOffCpuBy[k] ?? 0}; blocked ${all.longBlockedBy[k] ?? 0}, preempted ${all.longPreemptedBy[k] ?? 0})`,
      )
    for (const c of g.c64) {
      const retries = events.filter(
        (e) =>
          e[1] >= c.at[0] &&
          e[1] <= c.at[1] &&
          e[0] === 'timer' &&
          /^set: setTimeout: .*admissions\.ts/.test(e[3]),
      ).length
      console.log(
        `    c64 block: ${Math.round(c.rps)} req/s, serving thread ${c.loopUs.toFixed(1)} µs a request, process ${c.processUs.toFixed(1)} µs; admission retries ${((retries * 1000) / C64).toFixed(2)} per 1,000 requests`,
      )
    }
    for (const [k, v] of Object.entries(all.parts).sort((a, b) => b[1] - a[1]))
      console.log(`    ${k.padEnd(34)} ${(v * 1000).toFixed(0)} µs a piece`)
  }
}
