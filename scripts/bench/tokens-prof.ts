/**
 * @module
 * Where the tokens row's metered extra goes on the event loop, at the row's own concurrency (stop
 * 62): two gateways of one checkout under `bun --cpu-prof`, one sent only the plain key's requests
 * (`mock/bench`, no limits), the other only the metered key's (TPM + TPD + budget,
 * `mock/bench-priced`: the tokens row's two routes), a closed loop of `--concurrency` (16) each,
 * the two gateways loaded in turn, round by round, after a warm-up. Prints each gateway's CPU a
 * counted request and leaves the two profiles (`plain.cpuprofile`, `metered.cpuprofile`) in DIR
 * for `prof-steps.ts` (gov-prof.ts is the same at c=1 on the lane's governed key).
 *
 * bun scripts/bench/tokens-prof.ts DIR [--stream] [--warm N] [--requests N] [--concurrency C] [--root CHECKOUT]
 */
import { mkdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import { option } from './argv.ts'
import { cpuMicros } from './proc-stats.ts'
import { TOKENS_CONCURRENCY, withRouteSides } from './tokens.ts'
import type { Target } from './workload.ts'

const out = process.argv[2]
if (!out || out.startsWith('--')) {
  console.error(
    'usage: bun scripts/bench/tokens-prof.ts DIR [--stream] [--warm N] [--requests N] [--concurrency C] [--root CHECKOUT]',
  )
  process.exit(2)
}
mkdirSync(out, { recursive: true })
const warm = Number(option('--warm') ?? 15000)
const requests = Number(option('--requests') ?? 10000)
const concurrency = Number(option('--concurrency') ?? TOKENS_CONCURRENCY)
const stream = process.argv.includes('--stream')

async function load(t: Target, n: number): Promise<void> {
  let left = n
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body })
        if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`)
        await res.arrayBuffer()
      }
    }),
  )
}

await withRouteSides(
  {
    stream,
    root: option('--root'),
    bunFlags: (name) => ['--cpu-prof', `--cpu-prof-dir=${out}`, `--cpu-prof-name=${name}.cpuprofile`],
  },
  async (sides) => {
    for (const s of sides) await load(s.target, warm)
    const before = sides.map((s) => cpuMicros(s.pid))
    const load0 = loadavg()[0]!.toFixed(1)
    const rounds = 10
    for (let r = 0; r < rounds; r++)
      for (const s of r % 2 ? [...sides].reverse() : sides) await load(s.target, Math.ceil(requests / rounds))
    for (const [i, s] of sides.entries())
      console.log(
        `${s.name}: ${((cpuMicros(s.pid) - before[i]!) / requests).toFixed(0)} µs CPU a counted request`,
      )
    console.log(
      `load ${load0} → ${loadavg()[0]!.toFixed(1)}; profiles in ${out} (requests a profile: ${warm + requests})`,
    )
  },
)
