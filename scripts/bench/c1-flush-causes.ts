/**
 * @module
 * Why an admission flush at one request at a time is sometimes slow (issue 46, stop 63): gateways
 * under flush-probe.ts (this checkout, and `--baseline DIR`'s, or this one again with another
 * environment: `--env-now 'K=V;…'` / `--env-before 'K=V;…'`) take the lane's c=1 workload — the lane's
 * client, the governed key JSON and stream and the plain key, `--n` requests a target a block — in
 * alternating blocks after `--warm` requests a target. Every flush (`admitMany`) is put in one
 * class by what most of its wall time was: on the loop's core (work), runnable but not running
 * (the run queue: split by whether the gateway's own other threads ran for at least half that
 * wait — which then — or not: other processes), or neither (blocked: I/O, a futex). Flushes that
 * met SQLITE_BUSY are counted apart, with how long their admissions then waited for the commit.
 * Counts are per 10,000 requests; the load average is quoted beside each block.
 *
 * `bun scripts/bench/c1-flush-causes.ts [--n 1000] [--blocks 4] [--warm 2000] [--baseline DIR | .]
 *   [--env-now 'K=V;…'] [--env-before 'K=V;…'] [--over-ms 1]`
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { option } from './argv.ts'
import { runLaneClient } from './c1-client.ts'
import type { FlushSample } from './flush-probe.ts'
import { FULL_MODEL, type Gateway, REPO, startGateway, startMocks, workspace } from './processes.ts'
import { laneRoute } from './tokens.ts'
import { chatTarget } from './workload.ts'

const N = Number(option('--n') ?? 1000)
const BLOCKS = Number(option('--blocks') ?? 4)
const WARM = Number(option('--warm') ?? 2000)
const OVER_MS = Number(option('--over-ms') ?? 1)
const baselineArg = option('--baseline')
const baseline = baselineArg === '.' ? REPO : baselineArg
const envOf = (s: string | undefined): Record<string, string> =>
  Object.fromEntries(
    (s ?? '')
      .split(';')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  )

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!

interface Side {
  name: string
  gw: Gateway
  out: string
  targets: Awaited<ReturnType<typeof laneRoute>>[]
  windows: [number, number][]
  requests: number
  loads: string[]
  /** Over the c=1 blocks, by thread name (the worker threads as the probe names them): CPU and run-queue ns. */
  threads: Map<string, [number, number]>
}

/** Every thread's [CPU ns, run-queue ns] so far, by tid, with its name. */
function schedOf(pid: number): Map<string, [string, number, number]> {
  const m = new Map<string, [string, number, number]>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const at = `/proc/${pid}/task/${tid}`
      const [cpu, rq] = readFileSync(`${at}/schedstat`, 'utf8').split(' ').map(Number)
      const name = tid === String(pid) ? 'loop' : readFileSync(`${at}/comm`, 'utf8').trim()
      m.set(tid, [name, cpu!, rq!])
    } catch {}
  }
  return m
}

/** What most of a flush's wall time was. */
function classOf(s: FlushSample): string {
  const [, wall, cpu, rq] = s
  const blocked = Math.max(0, wall - cpu - rq)
  if (cpu >= rq && cpu >= blocked) return 'on the core (work)'
  if (blocked >= rq) return 'blocked (I/O, futex)'
  const own = s[8].reduce((a, [, c]) => a + c, 0)
  if (own < rq / 2) return 'run queue: other processes'
  const top = [...s[8]].sort((a, b) => b[1] - a[1])[0]!
  return `run queue: own thread (${top[0]})`
}

function report(side: Side): string {
  const samples = (JSON.parse(readFileSync(side.out, 'utf8')) as FlushSample[]).filter((s) =>
    side.windows.some(([a, b]) => s[0] >= a && s[0] <= b),
  )
  const per10k = (n: number) => ((n * 10_000) / side.requests).toFixed(1)
  const lines: string[] = []
  const decided = samples.filter((s) => !s[6])
  const slow = decided.filter((s) => s[1] > OVER_MS * 1000)
  const classes = new Map<string, FlushSample[]>()
  for (const s of slow) classes.set(classOf(s), [...(classes.get(classOf(s)) ?? []), s])
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0)
  lines.push(
    `${side.name}: ${side.requests} c=1 requests, ${decided.length} flushes decided; over ${OVER_MS} ms: ${slow.length} (${per10k(slow.length)} per 10,000 requests), longest ${(Math.max(0, ...slow.map((s) => s[1])) / 1000).toFixed(1)} ms; load ${side.loads.join(', ')}`,
  )
  for (const [k, xs] of [...classes].sort((a, b) => b[1].length - a[1].length)) {
    lines.push(
      `  ${per10k(xs.length).padStart(6)} per 10,000  ${k}: wall ${(mean(xs.map((s) => s[1])) / 1000).toFixed(2)} ms, CPU ${(mean(xs.map((s) => s[2])) / 1000).toFixed(2)}, run queue ${(mean(xs.map((s) => s[3])) / 1000).toFixed(2)}, blocked ${(mean(xs.map((s) => Math.max(0, s[1] - s[2] - s[3]))) / 1000).toFixed(2)}; voluntary switches ${mean(xs.map((s) => s[4])).toFixed(1)}, preempted ${mean(xs.map((s) => s[5])).toFixed(1)}`,
    )
  }
  // The other threads during the slow flushes and during the rest: CPU µs a flush, by name.
  const byThread = (xs: FlushSample[]) => {
    const m = new Map<string, [number, number]>()
    for (const s of xs)
      for (const [name, c, r] of s[8]) {
        const name2 = name.replace(/ \d+$/, '')
        const v = m.get(name2) ?? [0, 0]
        m.set(name2, [v[0] + c, v[1] + r])
      }
    return m
  }
  const slowBy = byThread(slow)
  const restBy = byThread(decided.filter((s) => s[1] <= OVER_MS * 1000))
  const rest = Math.max(1, decided.length - slow.length)
  const names = [...new Set([...slowBy.keys(), ...restBy.keys()])].sort(
    (a, b) => (slowBy.get(b)?.[0] ?? 0) - (slowBy.get(a)?.[0] ?? 0),
  )
  lines.push(
    `  other threads' CPU µs a flush, slow / the rest: ${names.map((n) => `${n} ${((slowBy.get(n)?.[0] ?? 0) / Math.max(1, slow.length)).toFixed(0)} / ${((restBy.get(n)?.[0] ?? 0) / rest).toFixed(1)}`).join('; ')}`,
  )
  // SQLITE_BUSY: the admissions' wait from the first busy call to the commit that decided them.
  // What the usage writer (the likeliest holder) did meanwhile: its CPU and run-queue ms, and the loop's run queue.
  const waits: number[] = []
  const writer: [number, number, number][] = []
  let first: FlushSample | null = null
  for (const s of samples) {
    if (s[6]) first ??= s
    else if (first !== null) {
      waits.push(s[0] + s[1] / 1000 - first[0])
      writer.push([
        (s[9][2] - first[9][2]) / 1000,
        (s[9][3] - first[9][3]) / 1000,
        (s[9][1] - first[9][1]) / 1000,
      ])
      first = null
    }
  }
  lines.push(
    `  met SQLITE_BUSY: ${samples.filter((s) => s[6]).length} calls, ${waits.length} waits (${per10k(waits.length)} per 10,000 requests), over ${OVER_MS} ms ${waits.filter((w) => w > OVER_MS).length} (${per10k(waits.filter((w) => w > OVER_MS).length)}), mean ${mean(waits).toFixed(2)} ms, longest ${Math.max(0, ...waits).toFixed(1)} ms; meanwhile the usage writer on a core ${mean(writer.map((w) => w[0])).toFixed(2)} ms, in the run queue ${mean(writer.map((w) => w[1])).toFixed(2)}; the loop in the run queue ${mean(writer.map((w) => w[2])).toFixed(2)}`,
  )
  const all = decided.map((s) => s[1]).sort((a, b) => a - b)
  lines.push(
    `  every decided flush: p50 ${all[Math.floor(all.length / 2)] ?? 0} µs, p99 ${all[Math.floor(all.length * 0.99)] ?? 0}, p99.9 ${all[Math.floor(all.length * 0.999)] ?? 0}; loop CPU mean ${mean(decided.map((s) => s[2])).toFixed(0)} µs, run queue mean ${mean(decided.map((s) => s[3])).toFixed(0)} µs`,
  )
  const perReq = (ns: number) => (ns / 1000 / side.requests).toFixed(1)
  lines.push(
    `  threads over the c=1 blocks, µs a request (CPU / run queue): ${[...side.threads]
      .sort((a, b) => b[1][0] - a[1][0])
      .map(([n, [c, r]]) => `${n} ${perReq(c)} / ${perReq(r)}`)
      .join('; ')}`,
  )
  return lines.join('\n')
}

const mocks = await startMocks(20)
const ws = workspace()
const sides: Side[] = []
try {
  const plan: [string, string | undefined, Record<string, string>][] = [
    ['now', undefined, envOf(option('--env-now'))],
  ]
  if (baseline) plan.push(['before', baseline, envOf(option('--env-before'))])
  for (const [name, root, env] of plan) {
    const dir = join(ws.dir, name)
    const out = join(dir, 'flushes.json')
    const gw = await startGateway({ dir }, mocks, {
      binary: false,
      root,
      env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096', FLUSH_PROBE_OUT: out, ...env },
      bunFlags: ['--preload', join(REPO, 'scripts', 'bench', 'flush-probe.ts')],
    })
    const governed = await laneRoute(gw, dir, true, false)
    const key = governed.headers.authorization!.slice('Bearer '.length)
    const targets = [
      governed,
      { ...chatTarget(gw.url, `mock/${FULL_MODEL}`, true, key), name: 'governed stream', stream: true },
      await laneRoute(gw, dir, false, false),
    ]
    sides.push({
      name: `${name}${Object.keys(env).length ? ` (${option(name === 'now' ? '--env-now' : '--env-before')})` : ''}`,
      gw,
      out,
      targets,
      windows: [],
      requests: 0,
      loads: [],
      threads: new Map(),
    })
  }
  for (const s of sides)
    await runLaneClient({ targets: s.targets, rounds: 1, batch: 0, warm: WARM, stamps: false, gaps: false })
  for (let b = 0; b < BLOCKS; b++) {
    for (const s of b % 2 ? [...sides].reverse() : sides) {
      const l0 = load()
      const t0 = performance.timeOrigin + performance.now()
      const a = schedOf(s.gw.pid)
      await runLaneClient({ targets: s.targets, rounds: 1, batch: N, warm: 0, stamps: false, gaps: false })
      s.windows.push([t0, performance.timeOrigin + performance.now()])
      s.requests += N * s.targets.length
      s.loads.push(`${l0}→${load()}`)
      for (const [tid, [name, cpu, rq]] of schedOf(s.gw.pid)) {
        const [, c0, r0] = a.get(tid) ?? [name, 0, 0]
        const key = name === 'Worker' ? 'worker threads' : name.replace(/ \d+$/, '')
        const v = s.threads.get(key) ?? [0, 0]
        s.threads.set(key, [v[0] + cpu - c0, v[1] + rq - r0])
      }
    }
  }
} finally {
  for (const s of sides) await s.gw.stop()
  await mocks.stop()
}
for (const s of sides) console.log(report(s))
ws.remove()
