/**
 * @module
 * The c=1 ablation ladder (issue 46): what the gateway does beyond the bare prototype, rung by
 * rung, in one run of interleaved rounds (c1-client.ts) so the machine's load falls on every rung
 * alike. Built in: direct (the fast mock), Caddy when found, the bare prototype, the bare prototype
 * as an Elysia route, and this checkout's gateway on the plain key. `--gw NAME=DIR` adds another
 * checkout's gateway (an ablation: a copy of src with one thing patched out), `NAME=DIR:noaccess`
 * the same with `logging.access: false`, `NAME=DIR:governed` on the governed route and key,
 * `NAME=DIR:K=V` with `K=V` in its environment (flags combine: `NAME=DIR:governed:K=V`).
 * Per rung: added p50 / p99 / p99.9 over direct (non-stream to the last byte, stream to the first
 * content byte), and from /proc, per counted request (both modes; the warm-up is sent first, apart):
 * CPU µs, context switches (voluntary + involuntary, every thread), time runnable but waiting for a
 * core (schedstat), and per thread that ran: its time on a core and its switches.
 *
 * `--c64 [a,b]` adds closed-loop throughput at 64 connections per gateway rung, or the rungs named
 * (ratio to direct, CPU).
 *
 * `bun scripts/bench/c1-ladder.ts [--quick] [--c64 [a,b]] [--gw NAME=DIR[:noaccess|:governed|:K=V]...]...`
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type BareProxy, startBareProxy } from './bare.ts'
import { type LaneTarget, runLaneClient } from './c1-client.ts'
import { type Caddy, findCaddy, startCaddy } from './caddy.ts'
import { cpuMicros, type ThreadStats, threadStats } from './proc-stats.ts'
import { FULL_MODEL, type Gateway, REPO, startGateway, startMocks, workspace } from './processes.ts'
import { type Ctx, closedLoad } from './scenarios.ts'
import { meteredKey } from './tokens.ts'
import { chatTarget, quantile, sortedCopy } from './workload.ts'

interface Rung {
  name: string
  pid: number | null
  target(stream: boolean): ReturnType<typeof chatTarget>
}

const argv = Bun.argv.slice(2)
const quick = argv.includes('--quick')
const gws: { name: string; dir: string; flags: string[] }[] = []
for (let i = 0; i < argv.length; i++) {
  if (argv[i] !== '--gw') continue
  const spec = argv[++i]!
  const eq = spec.indexOf('=')
  const [dir, ...flags] = spec.slice(eq + 1).split(':') as [string, ...string[]]
  gws.push({ name: spec.slice(0, eq), dir, flags })
}
const size = quick
  ? { rounds: 4, batch: 50, warm: 50 }
  : {
      rounds: Number(process.env.LADDER_ROUNDS ?? 20),
      batch: 100,
      warm: Number(process.env.LADDER_WARM ?? 200),
    }

const log = (s: string) => console.log(s)
const ws = workspace()
const mocks = await startMocks(20)
const stops: (() => Promise<void>)[] = []
try {
  const rungs: Rung[] = [{ name: 'direct', pid: null, target: (s) => chatTarget(mocks.fast.url, 'bench', s) }]
  const exe = findCaddy()
  if (exe) {
    const caddy: Caddy = await startCaddy(exe, mocks.fast.url, ws.dir)
    stops.push(() => caddy.stop())
    rungs.push({ name: 'caddy', pid: null, target: (s) => chatTarget(caddy.url, 'bench', s) })
  }
  for (const [name, env] of [
    ['bare', {}],
    ['bare-elysia', { BARE_ELYSIA: '1' }],
  ] as const) {
    const b: BareProxy = await startBareProxy({ mocks, dir: ws.dir }, env, `${name}.db`)
    stops.push(() => b.stop())
    rungs.push({ name, pid: b.pid, target: (s) => chatTarget(b.base, 'bench', s, b.key) })
  }
  for (const g of [{ name: 'plain', dir: REPO, flags: [] as string[] }, ...gws]) {
    const env = Object.fromEntries(
      g.flags.filter((f) => f.includes('=')).map((f) => f.split('=') as [string, string]),
    )
    const governed = g.flags.includes('governed')
    const dir = join(ws.dir, g.name)
    const gw: Gateway = await startGateway({ dir }, mocks, {
      binary: false,
      // LADDER_UPSTREAM: the mock, for an ablation whose route calls it itself.
      env: { ...env, BUN_CONFIG_MAX_HTTP_REQUESTS: '4096', LADDER_UPSTREAM: mocks.fast.url },
      root: g.dir === REPO ? undefined : g.dir,
      doc: g.flags.includes('noaccess')
        ? (d) => ({ ...d, logging: { ...(d.logging as object), access: false } })
        : undefined,
    })
    stops.push(() => gw.stop())
    const key = governed ? await meteredKey(gw, dir, false, 'bench-lane') : gw.key
    const model = governed ? `mock/${FULL_MODEL}` : 'mock/bench'
    rungs.push({ name: g.name, pid: gw.pid, target: (s) => chatTarget(gw.url, model, s, key) })
    log(`started ${g.name} (${[g.dir, ...g.flags].join(' ')}) pid ${gw.pid}`)
  }
  const targets: LaneTarget[] = [false, true].flatMap((stream) =>
    rungs.map((r) => ({ ...r.target(stream), name: `${r.name}/${stream ? 'stream' : 'nonstream'}`, stream })),
  )
  // The warm-up apart, so the /proc figures cover the counted requests only (JIT's first work not in them).
  await runLaneClient({ targets, rounds: 0, batch: 0, warm: size.warm, stamps: false, gaps: false })
  const before = new Map<string, { cpu: number; t: ThreadStats }>()
  for (const r of rungs) if (r.pid) before.set(r.name, { cpu: cpuMicros(r.pid), t: threadStats(r.pid) })
  const load0 = loadavg()
  const t0 = Date.now()
  const run = await runLaneClient({
    targets,
    rounds: size.rounds,
    batch: size.batch,
    warm: 0,
    stamps: false,
    gaps: false,
  })
  const secs = (Date.now() - t0) / 1000
  log(`\n${size.rounds} rounds × ${size.batch}, ${secs.toFixed(0)} s, load ${load0} → ${loadavg()}`)
  const requests = 2 * size.rounds * size.batch
  const pct = (xs: number[][], q: number) => quantile(sortedCopy(xs.flat()), q)
  log(
    '| rung | non-stream added p50 / p99 / p99.9 µs | first byte added p50 / p99 / p99.9 µs | CPU µs/req | ctx sw/req (vol+invol) | runq wait µs/req | per thread that ran: CPU µs/req, switches/req |',
  )
  log('|---|---|---|---|---|---|---|')
  const dn = run.total['direct/nonstream']!
  const df = run.first['direct/stream']!
  for (const r of rungs) {
    const n = run.total[`${r.name}/nonstream`]!
    const f = run.first[`${r.name}/stream`]!
    const cell = (xs: number[][], d: number[][]) =>
      r.name === 'direct'
        ? [0.5, 0.99, 0.999].map((q) => Math.round(pct(xs, q))).join(' / ')
        : [0.5, 0.99, 0.999].map((q) => `+${Math.round(pct(xs, q) - pct(d, q))}`).join(' / ')
    let stats = '| | | |'
    const b = before.get(r.name)
    if (r.pid && b) {
      const t = threadStats(r.pid)
      const cpu = (cpuMicros(r.pid) - b.cpu) / requests
      const ran = Object.keys(t.perThread)
        .map((id) => {
          const was = b.t.perThread[id]
          const now = t.perThread[id]!
          return {
            comm: now.comm,
            sw: now.switches - (was?.switches ?? 0),
            run: now.runNs - (was?.runNs ?? 0),
          }
        })
        .filter((x) => x.sw > 0)
        .sort((x, y) => y.run - x.run)
      const per = (x: number) => (x / requests).toFixed(2)
      stats = `| ${cpu.toFixed(0)} | ${per(t.voluntary - b.t.voluntary)} + ${per(t.involuntary - b.t.involuntary)} | ${((t.waitNs - b.t.waitNs) / 1000 / requests).toFixed(0)} | ${ran.map((x) => `${x.comm} ${(x.run / 1000 / requests).toFixed(0)} µs ${per(x.sw)} sw`).join(', ')} |`
    }
    log(`| ${r.name} | ${cell(n, dn)} | ${cell(f, df)} ${stats}`)
  }
  const errors = Object.entries(run.errors).filter(([, v]) => v)
  if (errors.length) log(`errors: ${JSON.stringify(Object.fromEntries(errors))}`)
  // `--c64 a,b`: those rungs only (default: every gateway rung).
  const c64At = argv.indexOf('--c64')
  const only = argv[c64At + 1]?.startsWith('--') === false ? argv[c64At + 1]!.split(',') : null
  if (c64At >= 0)
    await c64(
      rungs.filter(
        (r) =>
          r.name === 'direct' ||
          (only ? only.includes(r.name) : !r.name.startsWith('bare') && r.name !== 'caddy'),
      ),
    )
} finally {
  for (const s of stops.reverse()) await s().catch(() => {})
  await mocks.stop()
  ws.remove()
}

/**
 * `--c64`: closed loop at 64 connections (wrk when installed), direct and each gateway rung in
 * turn, three rounds (the order rotating), 4 s each after 1 s of warm-up: req/s over direct's of
 * the same round, and the rung's CPU per request.
 */
async function c64(rs: Rung[]): Promise<void> {
  const wrk = Bun.which('wrk')
  const ctx = { wrk: wrk ? { path: wrk, version: '' } : null, dir: ws.dir } as Ctx
  for (const stream of [false, true]) {
    const out: Record<string, string[]> = {}
    for (let round = 0; round < Number(process.env.LADDER_C64_ROUNDS ?? 3); round++) {
      let direct = 0
      const order = rs.slice(1)
      for (let k = 0; k < round; k++) order.push(order.shift()!)
      for (const r of [rs[0]!, ...order]) {
        const t = r.target(stream)
        await closedLoad(ctx, t, 64, 1)
        const cpu0 = r.pid ? cpuMicros(r.pid) : 0
        const res = await closedLoad(ctx, t, 64, 4)
        if (r.name === 'direct') direct = res.rps
        const cpu = r.pid ? (cpuMicros(r.pid) - cpu0) / Math.max(1, res.requests) : 0
        const cell = out[r.name] ?? []
        out[r.name] = cell
        cell.push(
          r.name === 'direct'
            ? `${Math.round(res.rps)}/s`
            : `${(res.rps / direct).toFixed(3)} × ${cpu.toFixed(0)} µs`,
        )
      }
    }
    log(
      `\nc64 ${stream ? 'stream' : 'non-stream'} (load ${loadavg()}): ratio to direct, CPU a request, per round`,
    )
    for (const [name, xs] of Object.entries(out)) log(`  ${name}: ${xs.join(' | ')}`)
  }
}

function loadavg(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!
}
