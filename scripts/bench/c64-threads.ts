/**
 * @module
 * Where a c64 closed-loop request's CPU goes, by thread, beside the bare prototype and direct
 * (issue 46): `bun run bench`'s closed-loop cell (wrk, one thread, c64, the fast mock in this
 * process, the gateway's plain key on `mock/bench`) for each target in turn — direct, the bare
 * prototype (`bare-proxy.ts`), this checkout's gateway and, with `--before DIR`, another
 * checkout's — the targets' order rotated every round, non-stream and stream in each round.
 *
 * Per target and run: requests a second, its ratio over the direct run of the same round, and the
 * CPU a request of each of the server's threads by name (`comm`: the event loop under the
 * process's name, Bun's HTTP client, the usage writer, mimalloc's scavenger, JSC's GC and JIT
 * threads), of the mock (this process's own CPU) and of wrk (this process's waited-for children's,
 * read after wrk exits). Each server is warmed first with `--warm` requests of each mode at c64,
 * then on until its JIT threads are flat (c1-warm.ts, at most a minute): steady state.
 *
 * `--env K=V,…`: more environment for this checkout's gateway (a runtime knob against the same code
 * without it: `--before` this checkout's own export).
 *
 * bun scripts/bench/c64-threads.ts [--before DIR] [--env K=V,…] [--rounds 6] [--seconds 4] [--warm 15000] [--modes json,stream]
 */
import { readFileSync } from 'node:fs'
import { option } from './argv.ts'
import { startBareProxy } from './bare.ts'
import { warmToSteady } from './c1-warm.ts'
import { findWrk } from './loadgen-wrk.ts'
import { threadStats, ticksPerSecond } from './proc-stats.ts'
import { type Gateway, startGateway, startMocks, workspace } from './processes.ts'
import { fmt, series } from './report.ts'
import { type Ctx, closedLoad } from './scenarios.ts'
import { chatTarget, type Target } from './workload.ts'

const rounds = Number(option('--rounds') ?? 6)
const seconds = Number(option('--seconds') ?? 4)
const warm = Number(option('--warm') ?? 15_000)
const modes = (option('--modes') ?? 'json,stream').split(',') as ('json' | 'stream')[]
const before = option('--before')
const C = 64
const afterEnv = Object.fromEntries(
  (option('--env') ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
)
/** µs on a core of each of `pid`'s threads, summed by name (schedstat: ns, not ticks). */
function threadMicros(pid: number): Record<string, number> {
  const out: Record<string, number> = {}
  for (const t of Object.values(threadStats(pid).perThread)) out[t.comm] = (out[t.comm] ?? 0) + t.runNs / 1000
  return out
}
const load1 = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!

/** This process's own CPU (the mock) and its waited-for children's (wrk), µs. */
function selfCpu(): { own: number; children: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const us = (a: number, b: number) => ((Number(f[a - 3]) + Number(f[b - 3])) * 1e6) / ticksPerSecond()
  return { own: us(14, 15), children: us(16, 17) }
}

const wrk = findWrk()
if (!wrk) throw new Error('c64-threads needs wrk (apt-get install -y wrk)')
const mocks = await startMocks(20)
const spaces = [workspace(), workspace()]
interface Server {
  name: string
  pid: number
  target: (stream: boolean) => Target
  stop: () => Promise<void>
}
const servers: Server[] = []
const ctx = { wrk, dir: spaces[0]!.dir, mocks } as Ctx
/** Per mode and target: rps, ratio over direct, and µs a request by thread name (plus mock, wrk). */
const runs: Record<string, { rps: number[]; ratio: number[]; cpu: Record<string, number[]> }> = {}
const loads: string[] = [load1()]
try {
  const bare = await startBareProxy(ctx)
  servers.push({
    name: 'bare',
    pid: bare.pid,
    target: (s) => chatTarget(bare.base, 'bench', s, bare.key),
    stop: bare.stop,
  })
  const gws: [string, string | undefined][] = before
    ? [
        ['before', before],
        ['after', undefined],
      ]
    : [['gateway', undefined]]
  for (const [i, [name, root]] of gws.entries()) {
    const gw: Gateway = await startGateway(spaces[i]!, mocks, {
      binary: false,
      root,
      env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096', ...(root ? {} : afterEnv) },
    })
    servers.push({
      name,
      pid: gw.pid,
      target: (s) => chatTarget(gw.url, 'mock/bench', s, gw.key),
      stop: () => gw.stop(),
    })
  }
  console.log(`warming ${servers.map((s) => s.name).join(', ')} (load ${load1()})`)
  for (const s of servers) {
    for (const mode of modes) {
      let sent = 0
      while (sent < warm) sent += (await closedLoad(ctx, s.target(mode === 'stream'), C, 3)).requests
    }
  }
  // Then on until each one's JIT threads are flat (the lane's steady state, c1-warm.ts): a
  // gateway still compiling pays its compiles in the rounds.
  await warmToSteady(
    { ...ctx, log: (line: string) => console.log(line) },
    servers.map((s) => ({
      name: s.name,
      pid: s.pid,
      targets: [{ nonstream: s.target(false), stream: s.target(true) }],
    })),
    { requests: 1, fewer: 0, untilFlat: true },
  )
  const direct = { name: 'direct', pid: 0, target: (s: boolean) => chatTarget(mocks.fast.url, 'bench', s) }
  for (let r = 0; r < rounds; r++) {
    for (const mode of modes) {
      const stream = mode === 'stream'
      // Direct first, then the servers rotated a place each round.
      const k = r % servers.length
      const order = [direct, ...servers.slice(k), ...servers.slice(0, k)]
      let directRps = Number.NaN
      for (const s of order) {
        const cpu0 = s.pid ? threadMicros(s.pid) : {}
        const self0 = selfCpu()
        const res = await closedLoad(ctx, s.target(stream), C, seconds)
        const self1 = selfCpu()
        const cpu1 = s.pid ? threadMicros(s.pid) : {}
        const n = Math.max(1, res.requests)
        const key = `${mode}/${s.name}`
        runs[key] ??= { rps: [], ratio: [], cpu: {} }
        const cell = runs[key]
        if (s === direct) directRps = res.rps
        cell.rps.push(res.rps)
        cell.ratio.push(res.rps / directRps)
        const per: Record<string, number> = {
          mock: (self1.own - self0.own) / n,
          wrk: (self1.children - self0.children) / n,
        }
        let total = 0
        for (const [t, v] of Object.entries(cpu1)) {
          const d = (v - (cpu0[t] ?? 0)) / n
          per[t] = d
          total += d
        }
        if (s.pid) per['server, all threads'] = total
        for (const [t, v] of Object.entries(per)) {
          cell.cpu[t] ??= []
          cell.cpu[t].push(v)
        }
        if (res.errors) console.log(`  ${mode} ${s.name}: ${res.errors} errors`)
      }
    }
    loads.push(load1())
    console.log(
      `round ${r + 1}: ${modes
        .flatMap((m) =>
          ['direct', ...servers.map((s) => s.name)].map(
            (n) =>
              `${m}/${n} ${fmt(runs[`${m}/${n}`]!.rps.at(-1)!)} (${fmt(runs[`${m}/${n}`]!.ratio.at(-1)!, 3)})`,
          ),
        )
        .join(', ')} load ${load1()}`,
    )
  }
  console.log(
    `\n${rounds} rounds of ${seconds} s a target, c${C}, wrk ${wrk.version}; load ${loads.join(' → ')}\n`,
  )
  const m = (xs: number[] | undefined, d = 0) => {
    if (!xs) return '—'
    const s = series(xs)
    return `${fmt(s.median, d)} (${fmt(s.min, d)}–${fmt(s.max, d)})`
  }
  for (const mode of modes) {
    const names = ['direct', ...servers.map((s) => s.name)]
    console.log(`### ${mode}\n\n| | ${names.join(' | ')} |\n|---|${names.map(() => '---|').join('')}`)
    console.log(`| req/s | ${names.map((n) => m(runs[`${mode}/${n}`]!.rps)).join(' | ')} |`)
    console.log(
      `| × direct (same round) | ${names.map((n) => m(runs[`${mode}/${n}`]!.ratio, 3)).join(' | ')} |`,
    )
    const threads = new Set(names.flatMap((n) => Object.keys(runs[`${mode}/${n}`]!.cpu)))
    const totalOf = (t: string) =>
      Math.max(...names.map((n) => series(runs[`${mode}/${n}`]!.cpu[t] ?? []).median).filter(Number.isFinite))
    for (const t of [...threads].sort((a, b) => totalOf(b) - totalOf(a))) {
      if (totalOf(t) < 0.5) continue
      console.log(
        `| CPU µs/req: ${t} | ${names.map((n) => m(runs[`${mode}/${n}`]!.cpu[t], 1)).join(' | ')} |`,
      )
    }
    if (before) {
      const a = runs[`${mode}/after`]!
      const b = runs[`${mode}/before`]!
      const rr = a.rps.map((x, i) => x / b.rps[i]!)
      const cr = a.cpu['server, all threads']!.map((x, i) => x / b.cpu['server, all threads']![i]!)
      console.log(`| after ÷ before, req/s, round by round | ${m(rr, 3)} |`)
      console.log(`| after ÷ before, server CPU µs/req, round by round | ${m(cr, 3)} |`)
    }
    console.log('')
  }
} finally {
  for (const s of servers) await s.stop()
  await mocks.stop()
  for (const w of spaces) w.remove()
}
