/**
 * @module
 * JSC's compiles a request at one request at a time, plain against governed (stop 61): one gateway
 * with `BUN_JSC_reportCompileTimes` (each baseline, DFG and FTL compile a line on its stderr),
 * each route warmed, then `--n` requests of each route in turn at c=1, counting the compile lines
 * each run added, by tier and by function (the most compiled first). A route whose count does not
 * fall with warm-up recompiles (deoptimizes) for as long as it runs: JIT threads' CPU and the
 * loop's plan installs a request.
 *
 * `bun scripts/bench/jit-count.ts [--n 2000] [--warm 10000] [--stream] [--rounds 3] [--top 12]`
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { option } from './argv.ts'
import { oneAtATime } from './c1-client.ts'
import { startGateway, startMocks, workspace } from './processes.ts'
import { laneRoute } from './tokens.ts'

const n = Number(option('--n') ?? 2000)
const warm = Number(option('--warm') ?? 10_000)
const rounds = Number(option('--rounds') ?? 3)
const top = Number(option('--top') ?? 12)
const stream = process.argv.includes('--stream')

const mocks = await startMocks(20)
const ws = workspace()
try {
  const gw = await startGateway(ws, mocks, {
    binary: false,
    env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096', BUN_JSC_reportCompileTimes: '1' },
  })
  const log = join(ws.dir, 'gateway.log')
  const targets = {
    plain: await laneRoute(gw, ws.dir, false, stream),
    governed: await laneRoute(gw, ws.dir, true, stream),
  }
  const send = oneAtATime
  for (const t of Object.values(targets)) await send(t, warm)
  const lines = () => readFileSync(log, 'utf8').split('\n')
  console.log(`${stream ? 'stream' : 'non-stream'}; warm ${warm} a route; ${n} a run`)
  for (let r = 0; r < rounds; r++) {
    for (const t of Object.values(targets)) {
      const before = lines().length
      await send(t, n)
      const added = lines()
        .slice(before - 1)
        .filter((l) => l.startsWith('Optimized '))
      const tiers: Record<string, number> = {}
      const fns: Record<string, number> = {}
      for (const l of added) {
        const tier = / using (\S+) with/.exec(l)?.[1] ?? '?'
        tiers[tier] = (tiers[tier] ?? 0) + 1
        const fn = /^Optimized (.*?)#/.exec(l)?.[1] || '(anonymous)'
        fns[fn] = (fns[fn] ?? 0) + 1
      }
      const tierText = Object.entries(tiers)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')
      const fnText = Object.entries(fns)
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([k, v]) => `${k} ${v}`)
        .join('; ')
      console.log(`round ${r + 1} ${t.name}: ${added.length} compiles (${tierText}) — ${fnText}`)
    }
  }
  await gw.stop()
} finally {
  await mocks.stop()
  ws.remove()
}
