/**
 * @module
 * Where a governed request's extra CPU goes (issues 41, 46): two gateways of one checkout under
 * `bun --cpu-prof`, one sent only the plain key's requests (`mock/bench`), the other only the
 * governed key's (TPM + TPD + budget, `mock/bench-full`: priced, with a fallback), the same number
 * each, one at a time, non-stream and stream in turn after a warm-up. Prints each gateway's CPU a
 * counted request and leaves the two profiles (`plain.cpuprofile`, `governed.cpuprofile`) in DIR
 * for `scripts/bench/prof-steps.ts`, which splits the governed one by step.
 *
 * `--stream`: streamed requests only (the tokens row's stream route: the governance without the
 * JSON answer asked as a stream). `--json`: non-stream requests only (the JSON answer the governed
 * gateway asks as a stream, gates and assembles).
 *
 * bun scripts/bench/gov-prof.ts DIR [--warm N] [--requests N] [--root CHECKOUT] [--stream | --json]
 */
import { mkdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { option } from './argv.ts'
import { runLaneClient } from './c1-client.ts'
import { cpuMicros } from './proc-stats.ts'
import { FULL_MODEL, startGateway, startMocks, workspace } from './processes.ts'
import { meteredKey } from './tokens.ts'
import { chatTarget } from './workload.ts'

const out = process.argv[2]
if (!out || out.startsWith('--')) {
  console.error(
    'usage: bun scripts/bench/gov-prof.ts DIR [--warm N] [--requests N] [--root CHECKOUT] [--stream | --json]',
  )
  process.exit(2)
}
mkdirSync(out, { recursive: true })
const warm = Number(option('--warm') ?? 4000)
const requests = Number(option('--requests') ?? 4000)
const root = option('--root')
if (process.argv.includes('--stream') && process.argv.includes('--json')) {
  console.error('gov-prof: --stream and --json each profile one route alone; give one, or neither for both')
  process.exit(2)
}
const streams = process.argv.includes('--stream')
  ? [true]
  : process.argv.includes('--json')
    ? [false]
    : [false, true]

const mocks = await startMocks(20)
const ws = workspace()
const sides = [] as { name: string; pid: number; stop: () => Promise<void>; stream: boolean[] }[]
const targets = []
for (const name of ['plain', 'governed']) {
  const dir = join(ws.dir, name)
  const gw = await startGateway({ dir }, mocks, {
    binary: false,
    root,
    // The cap set, so serve does not re-run itself and the profiled process is the server.
    env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
    bunFlags: ['--cpu-prof', `--cpu-prof-dir=${out}`, `--cpu-prof-name=${name}.cpuprofile`],
  })
  const key = name === 'governed' ? await meteredKey(gw, dir, false, 'bench-gov') : gw.key
  const model = name === 'governed' ? `mock/${FULL_MODEL}` : 'mock/bench'
  for (const stream of streams)
    targets.push({ ...chatTarget(gw.url, model, stream, key), name: `${name}/${stream}`, stream })
  sides.push({ name, pid: gw.pid, stop: () => gw.stop(), stream: streams })
}
await runLaneClient({ targets, rounds: 0, batch: 0, warm, stamps: false, gaps: false })
const before = sides.map((s) => cpuMicros(s.pid))
const load0 = loadavg()[0]!.toFixed(1)
const rounds = 10
await runLaneClient({
  targets,
  rounds,
  batch: Math.ceil(requests / rounds / streams.length),
  warm: 0,
  stamps: false,
  gaps: false,
})
for (const [i, s] of sides.entries())
  console.log(
    `${s.name}: ${((cpuMicros(s.pid) - before[i]!) / requests).toFixed(0)} µs CPU a counted request`,
  )
console.log(`load ${load0} → ${loadavg()[0]!.toFixed(1)}; profiles in ${out}`)
for (const s of sides) await s.stop()
await mocks.stop()
ws.remove()
