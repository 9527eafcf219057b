/**
 * @module
 * A plain-request change measured interleaved against the code before it (issue 46): gateways of
 * two checkouts — `--before DIR` (an export of main: `git archive main | tar -x -C DIR`, with
 * `node_modules` linked in) and this one — on the plain key, non-stream chat, each warmed with
 * `--warm` requests at c8 (15,000 by default: past the JIT's tier-up). Then `--rounds` rounds, each:
 * `--batch` requests a side at c=1 in the lane's interleaved client (direct beside them, for the
 * added p50), then `--batch` × 4 a side at c16, the order of the sides swapped every other round.
 * Per round and side: the loop thread's CPU a request (schedstat of the main thread) at c=1 and at
 * c16, and the p50 at c=1 added over direct; then each figure's after ÷ before round by round.
 *
 * `--after DIR`: another export in place of this checkout (a commit measured while work goes on).
 * `--governed`: the lane's governed route and key instead (TPM, TPD, a budget, a fallback);
 * `--stream`: streamed requests (the p50 then to the first content byte, and to the last byte
 * beside it). With each, the whole process's CPU and context switches (every thread) a request at c=1.
 *
 * bun scripts/bench/plain-ab.ts --before DIR [--after DIR] [--governed] [--stream] [--rounds 8] [--batch 1000] [--warm 15000]
 */
import { readFileSync } from 'node:fs'
import { option } from './argv.ts'
import { runLaneClient } from './c1-client.ts'
import { findWrk } from './loadgen-wrk.ts'
import { cpuMicros, loopMicros, threadStats } from './proc-stats.ts'
import { FULL_MODEL, type Gateway, startGateway, startMocks, workspace } from './processes.ts'
import { fmt, series } from './report.ts'
import { type Ctx, closedLoad } from './scenarios.ts'
import { meteredKey } from './tokens.ts'
import { chatTarget, quantile, sortedCopy } from './workload.ts'

const before = option('--before')
if (!before) {
  console.error('usage: bun scripts/bench/plain-ab.ts --before DIR [--rounds N] [--batch N] [--warm N]')
  process.exit(2)
}
const rounds = Number(option('--rounds') ?? 8)
const batch = Number(option('--batch') ?? 1000)
const warm = Number(option('--warm') ?? 15_000)
const governed = process.argv.includes('--governed')
const stream = process.argv.includes('--stream')
const load1 = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]

/** Voluntary + involuntary context switches of every thread of `pid`. */
function switches(pid: number): number {
  const t = threadStats(pid)
  return t.voluntary + t.involuntary
}

const mocks = await startMocks(20)
const spaces = [workspace(), workspace()]
interface Side {
  name: string
  gw: Gateway
  key: string
  c1: number[]
  c16: number[]
  p50: number[]
  end: number[]
  cpu: number[]
  sw: number[]
}
const sides: Side[] = []
try {
  for (const [i, [name, root]] of (
    [
      ['before', before],
      ['after', option('--after')],
    ] as const
  ).entries()) {
    const gw = await startGateway(spaces[i]!, mocks, {
      binary: false,
      root,
      env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
    })
    const key = governed ? await meteredKey(gw, spaces[i]!.dir, false, 'bench-lane') : gw.key
    sides.push({ name, gw, key, c1: [], c16: [], p50: [], end: [], cpu: [], sw: [] })
  }
  const model = governed ? `mock/${FULL_MODEL}` : 'mock/bench'
  const target = (s: (typeof sides)[number]) => chatTarget(s.gw.url, model, stream, s.key)
  const ctx = { wrk: findWrk(), dir: spaces[0]!.dir } as Ctx
  console.log(
    `${governed ? 'governed' : 'plain'} key, ${stream ? 'stream' : 'non-stream'}: warming (load ${load1()})`,
  )
  for (const s of sides) {
    let sent = 0
    while (sent < warm) sent += (await closedLoad(ctx, target(s), 8, 3)).requests
  }
  const direct = { ...chatTarget(mocks.fast.url, 'bench', stream), name: 'direct', stream }
  const loads: string[] = [load1()!]
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...sides].reverse() : sides
    const loop0 = order.map((s) => loopMicros(s.gw.pid))
    const cpu0 = order.map((s) => cpuMicros(s.gw.pid))
    const sw0 = order.map((s) => switches(s.gw.pid))
    const run = await runLaneClient({
      targets: [direct, ...order.map((s) => ({ ...target(s), name: s.name, stream }))],
      rounds: 5,
      batch: batch / 5,
      warm: 0,
      stamps: false,
      gaps: false,
    })
    const p50 = (xs: number[][]) => quantile(sortedCopy(xs.flat()), 0.5)
    const samples = stream ? run.first : run.total
    const d = p50(samples.direct!)
    const dEnd = p50(run.total.direct!)
    for (const [i, s] of order.entries()) {
      s.c1.push((loopMicros(s.gw.pid) - loop0[i]!) / batch)
      s.cpu.push((cpuMicros(s.gw.pid) - cpu0[i]!) / batch)
      s.sw.push((switches(s.gw.pid) - sw0[i]!) / batch)
      s.p50.push(p50(samples[s.name]!) - d)
      s.end.push(p50(run.total[s.name]!) - dEnd)
    }
    for (const s of order) {
      const l0 = loopMicros(s.gw.pid)
      const res = await closedLoad(ctx, target(s), 16, 2)
      s.c16.push((loopMicros(s.gw.pid) - l0) / Math.max(1, res.requests))
    }
    loads.push(load1()!)
  }
  console.log(`${rounds} rounds (${batch} requests a side at c=1, 2 s at c16), load ${loads.join(' → ')}`)
  console.log('| figure | before | after | after ÷ before, round by round |\n|---|---|---|---|')
  const [b, a] = sides as [(typeof sides)[0], (typeof sides)[0]]
  for (const [label, key, digits] of [
    ['loop CPU µs a request, c=1', 'c1', 0],
    ['process CPU µs a request (every thread), c=1', 'cpu', 0],
    ['context switches a request (every thread), c=1', 'sw', 2],
    ['loop CPU µs a request, c16', 'c16', 0],
    [stream ? 'added p50 µs at c=1, first content byte' : 'added p50 µs at c=1', 'p50', 0],
    ...(stream ? ([['added p50 µs at c=1, last byte', 'end', 0]] as const) : []),
  ] as const) {
    const sb = series(b[key])
    const sa = series(a[key])
    const ratio = series(a[key].map((x, i) => x / b[key][i]!))
    console.log(
      `| ${label} | ${fmt(sb.median, digits)} (${fmt(sb.min, digits)}–${fmt(sb.max, digits)}) | ${fmt(sa.median, digits)} (${fmt(sa.min, digits)}–${fmt(sa.max, digits)}) | ${fmt(ratio.median, 3)} × (${fmt(ratio.min, 3)}–${fmt(ratio.max, 3)}) |`,
    )
  }
} finally {
  for (const s of sides) await s.gw.stop()
  await mocks.stop()
  for (const w of spaces) w.remove()
}
