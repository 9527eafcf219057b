/**
 * @module
 * What a plain key's non-stream chat request does on the loop beyond the bare prototype's handler
 * (issue 46): the gateway (this checkout, or `--root CHECKOUT`) and the bare prototype
 * (`bare-proxy.ts`), both under `bun --cpu-prof`, warmed at c8 with non-stream requests only to
 * steady state (`--warm`, 15,000 each by default), then left idle for two seconds — the gap that
 * `prof-steps.ts --after-gap 1000` cuts the profile at — then sent `--requests` one at a time,
 * the two in interleaved rounds. Prints each one's loop-thread CPU (schedstat) and whole-process
 * CPU a counted request and the p50 added over direct; leaves `plain.cpuprofile` and
 * `bare.cpuprofile` in DIR. `--stream`: streamed requests throughout (the p50 to the first content
 * byte).
 *
 * `--closed S`: after the gap, S seconds of closed loop at c64 (wrk) a side instead of the c=1
 * rounds — `bun run bench`'s c64 cell, profiled.
 *
 * bun scripts/bench/plain-prof.ts DIR [--stream] [--warm N] [--requests N] [--closed S] [--interval µs] [--root CHECKOUT]
 */
import { mkdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import { option } from './argv.ts'
import { startBareProxy } from './bare.ts'
import { runLaneClient } from './c1-client.ts'
import { findWrk } from './loadgen-wrk.ts'
import { cpuMicros, loopMicros } from './proc-stats.ts'
import { startGateway, startMocks, workspace } from './processes.ts'
import { type Ctx, closedLoad } from './scenarios.ts'
import { chatTarget, quantile, sortedCopy } from './workload.ts'

const out = process.argv[2]
if (!out || out.startsWith('--')) {
  console.error(
    'usage: bun scripts/bench/plain-prof.ts DIR [--warm N] [--requests N] [--interval µs] [--root CHECKOUT] [--stream] [--closed S]',
  )
  process.exit(2)
}
mkdirSync(out, { recursive: true })
const warm = Number(option('--warm') ?? 15_000)
const requests = Number(option('--requests') ?? 6000)
const interval = Number(option('--interval') ?? 250)
const stream = process.argv.includes('--stream')
const prof = (name: string) => [
  '--cpu-prof',
  `--cpu-prof-dir=${out}`,
  `--cpu-prof-name=${name}.cpuprofile`,
  `--cpu-prof-interval=${interval}`,
]

const mocks = await startMocks(20)
const ws = workspace()
const gw = await startGateway(ws, mocks, {
  binary: false,
  root: option('--root'),
  // The cap set, so serve does not re-run itself and the profiled process is the server.
  env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
  bunFlags: prof('plain'),
})
const bare = await startBareProxy({ mocks, dir: ws.dir }, {}, 'bare.db', prof('bare'))
const sides = [
  { name: 'plain', pid: gw.pid, target: chatTarget(gw.url, 'mock/bench', stream, gw.key) },
  { name: 'bare', pid: bare.pid, target: chatTarget(bare.base, 'bench', stream, bare.key) },
]
const ctx = { wrk: findWrk(), dir: ws.dir } as Ctx
for (const s of sides) {
  let sent = 0
  while (sent < warm) sent += (await closedLoad(ctx, s.target, 8, 3)).requests
  console.log(`${s.name}: warmed with ${sent} requests`)
}
await Bun.sleep(2000)
const targets = [
  { ...chatTarget(mocks.fast.url, 'bench', stream), name: 'direct', stream },
  ...sides.map((s) => ({ ...s.target, name: s.name, stream })),
]
const closedS = option('--closed')
if (closedS) {
  for (const s of sides) {
    const [loop0, cpu0] = [loopMicros(s.pid), cpuMicros(s.pid)]
    const load0 = loadavg()[0]!.toFixed(1)
    const res = await closedLoad(ctx, s.target, 64, Number(closedS))
    const n = Math.max(1, res.requests)
    console.log(
      `${s.name}, c64: ${Math.round(res.rps)} req/s, loop ${((loopMicros(s.pid) - loop0) / n).toFixed(0)} µs, process ${((cpuMicros(s.pid) - cpu0) / n).toFixed(0)} µs a request (load ${load0} → ${loadavg()[0]!.toFixed(1)})`,
    )
  }
  await gw.stop()
  await bare.stop()
  await mocks.stop()
  ws.remove()
  process.exit(0)
}
const before = sides.map((s) => [loopMicros(s.pid), cpuMicros(s.pid)] as const)
const load0 = loadavg()[0]!.toFixed(1)
const rounds = 20
const batch = Math.ceil(requests / rounds)
const run = await runLaneClient({ targets, rounds, batch, warm: 0, stamps: false, gaps: false })
const n = rounds * batch
const p50 = (name: string) => quantile(sortedCopy((stream ? run.first : run.total)[name]!.flat()), 0.5)
for (const [i, s] of sides.entries()) {
  const [loop0, cpu0] = before[i]!
  console.log(
    `${s.name}: loop ${((loopMicros(s.pid) - loop0) / n).toFixed(0)} µs, process ${((cpuMicros(s.pid) - cpu0) / n).toFixed(0)} µs a request; p50 +${(p50(s.name) - p50('direct')).toFixed(0)} µs over direct`,
  )
}
console.log(`${n} requests each, load ${load0} → ${loadavg()[0]!.toFixed(1)}; profiles in ${out}`)
await gw.stop()
await bare.stop()
await mocks.stop()
ws.remove()
