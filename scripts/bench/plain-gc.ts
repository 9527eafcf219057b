/**
 * @module
 * What the collector costs a plain non-stream request against the bare prototype (issue 46, the
 * plain request function by function): both served with JSC's GC log on (`BUN_JSC_logGC=1`),
 * warmed at c8 past `--warm` requests, then `--requests` each at c=1 in interleaved rounds. From
 * the logs of the counted requests only: the KB allocated a request (the heap at each collection's
 * start less what the one before left), the collections
 * (eden, full) and their pauses on the serving thread. Counts, not times: a pause moves with the
 * machine's load, the bytes a request allocates do not.
 *
 * `--noaccess`: the gateway with `logging.access: false` (what the access line allocates).
 *
 * bun scripts/bench/plain-gc.ts [--warm 15000] [--requests 5000] [--root CHECKOUT] [--noaccess]
 */
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { option } from './argv.ts'
import { startBareProxy } from './bare.ts'
import { runLaneClient } from './c1-client.ts'
import { findWrk } from './loadgen-wrk.ts'
import { startGateway, startMocks, workspace } from './processes.ts'
import { type Ctx, closedLoad } from './scenarios.ts'
import { chatTarget } from './workload.ts'

const warm = Number(option('--warm') ?? 15_000)
const requests = Number(option('--requests') ?? 5000)

const mocks = await startMocks(20)
const ws = workspace()
const env = { BUN_JSC_logGC: '1', BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' }
const bareLog = join(ws.dir, 'bare.log')
const started: { stop(): Promise<void> }[] = []
try {
  const gw = await startGateway(ws, mocks, {
    binary: false,
    root: option('--root'),
    env,
    doc: process.argv.includes('--noaccess')
      ? (d) => ({ ...d, logging: { ...(d.logging as object), access: false } })
      : undefined,
  })
  started.push(gw)
  const bare = await startBareProxy({ mocks, dir: ws.dir }, env, 'bare.db', [], bareLog)
  started.push(bare)
  const sides = [
    { name: 'plain', log: gw.logPath, target: chatTarget(gw.url, 'mock/bench', false, gw.key) },
    { name: 'bare', log: bareLog, target: chatTarget(bare.base, 'bench', false, bare.key) },
  ]
  const ctx = { wrk: findWrk(), dir: ws.dir } as Ctx
  for (const s of sides) {
    let sent = 0
    while (sent < warm) sent += (await closedLoad(ctx, s.target, 8, 3)).requests
  }
  await Bun.sleep(500)
  const from = sides.map((s) => statSync(s.log).size)
  const rounds = 10
  await runLaneClient({
    targets: sides.map((s) => ({ ...s.target, name: s.name, stream: false })),
    rounds,
    batch: Math.ceil(requests / rounds),
    warm: 0,
    stamps: false,
    gaps: false,
  })
  await Bun.sleep(500)
  const n = rounds * Math.ceil(requests / rounds)
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0]
  for (const [i, s] of sides.entries()) {
    const text = readFileSync(s.log, 'utf8').slice(from[i])
    // Allocated between two collections: the heap at a collection's start less the heap the one
    // before it left. JSC's lines: `START M <kb>kb => <Kind>, …` opens a collection, `… => <kb>kb,
    // p=<ms>ms (max <ms>), cycle <ms>ms END]` closes it (on the same line for a short one).
    const kinds: Record<string, { n: number; pauseMs: number; cycleMs: number }> = {}
    let current: { n: number; pauseMs: number; cycleMs: number } | null = null
    let kb = 0
    let left: number | null = null
    for (const line of text.split('\n')) {
      const start = /START \w+ (\d+)kb => (\w+)/.exec(line)
      if (start) {
        if (left !== null) kb += Number(start[1]) - left
        kinds[start[2]!] ??= { n: 0, pauseMs: 0, cycleMs: 0 }
        current = kinds[start[2]!]!
        current.n++
      }
      // Each line of a collection ends a stop of the loop: its `p=` (the `max` is the process's).
      if (current) for (const m of line.matchAll(/ p=([\d.]+)ms/g)) current.pauseMs += Number(m[1])
      const end = /=> (\d+)kb, p=[\d.]+ms \(max [\d.]+\), cycle ([\d.]+)ms END/.exec(line)
      if (end && current) {
        left = Number(end[1])
        current.cycleMs += Number(end[2])
        current = null
      }
    }
    const cols = Object.entries(kinds)
      .map(
        ([k, v]) =>
          `${k} ${v.n} (one every ${Math.round(n / v.n)} requests; pauses ${(v.pauseMs / v.n).toFixed(2)} ms a collection, ${((v.pauseMs * 1000) / n).toFixed(1)} µs a request; cycle ${(v.cycleMs / v.n).toFixed(1)} ms)`,
      )
      .join(', ')
    console.log(
      `${s.name}: ~${(kb / Math.max(1, n)).toFixed(1)} KB allocated a request between collections; ${cols || 'no collection'}`,
    )
  }
  console.log(`${n} requests each at c=1, load ${load}`)
} finally {
  for (const s of started) await s.stop()
  await mocks.stop()
  ws.remove()
}
