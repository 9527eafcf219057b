/**
 * @module
 * What a gateway request allocates, by JSC cell type (issue 46, "What a request allocates"): a
 * gateway started with `alloc-probe.ts` preloaded, warmed at c8, then in rounds: SIGUSR2 (a full
 * collection, the cells counted), `--batch` requests one at a time from this process, SIGUSR2 (the
 * cells counted again, no collection). A round with no requests is the probe's own cost; the
 * cells a request = (a batch's − an empty round's) ÷ batch. Counts, not times: load does not move
 * them. A round in which an eden collection ran counts fewer cells (dead ones are gone): the
 * median over rounds, and `--batch` small, keep that out.
 *
 * `--governed`: the key on a plan with TPM, TPD and a budget (the lane's governed key).
 * `--stream`: a streamed request in place of a non-stream one.
 * `--get PATH`: a GET of that path (`/healthz`: the framework, the hooks, the access line).
 *
 * bun scripts/bench/alloc-count.ts [--warm 5000] [--batch 20] [--rounds 9] [--root CHECKOUT] [--governed] [--stream]
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { option } from './argv.ts'
import { findWrk } from './loadgen-wrk.ts'
import { REPO, startGateway, startMocks, workspace } from './processes.ts'
import { type Ctx, closedLoad } from './scenarios.ts'
import { chatTarget } from './workload.ts'

const warm = Number(option('--warm') ?? 5000)
const batch = Number(option('--batch') ?? 20)
const rounds = Number(option('--rounds') ?? 9)
const governed = process.argv.includes('--governed')
const stream = process.argv.includes('--stream')
/** `--get PATH`: a GET of that path in place of the chat request (`/healthz`: the framework, the hooks, the access line). */
const get = option('--get')

const mocks = await startMocks(20)
const ws = workspace()
const out = join(ws.dir, 'alloc.json')
const gw = await startGateway(ws, mocks, {
  binary: false,
  root: option('--root'),
  plan: governed ? 'metered' : undefined,
  env: {
    BUN_OPTIONS: `--preload ${join(REPO, 'scripts', 'bench', 'alloc-probe.ts')}`,
    ALLOC_PROBE_OUT: out,
  },
})
const target = chatTarget(gw.url, 'mock/bench', stream, gw.key)

async function one(): Promise<void> {
  const res = get
    ? await fetch(`${gw.url}${get}`)
    : await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body })
  await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`status ${res.status}`)
}

async function round(n: number): Promise<Record<string, number>> {
  process.kill(gw.pid, 'SIGUSR2')
  await Bun.sleep(300)
  for (let i = 0; i < n; i++) await one()
  await Bun.sleep(50)
  process.kill(gw.pid, 'SIGUSR2')
  await Bun.sleep(200)
  return JSON.parse(readFileSync(out, 'utf8') || '{}')
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? 0
}

try {
  const ctx = { wrk: findWrk(), dir: ws.dir } as Ctx
  let sent = 0
  while (sent < warm) sent += (await closedLoad(ctx, target, 8, 2)).requests
  for (let i = 0; i < 50; i++) await one()
  const empty: Record<string, number>[] = []
  const full: Record<string, number>[] = []
  for (let r = 0; r < rounds; r++) {
    empty.push(await round(0))
    full.push(await round(batch))
  }
  const types = new Set([...empty, ...full].flatMap((d) => Object.keys(d)))
  const rows = [...types]
    .map((t) => {
      const e = median(empty.map((d) => d[t] ?? 0))
      const f = median(full.map((d) => d[t] ?? 0))
      return { t, perRequest: (f - e) / batch }
    })
    .filter((r) => Math.abs(r.perRequest) >= 0.05)
    .sort((a, b) => b.perRequest - a.perRequest)
  const total = rows.reduce((s, r) => s + r.perRequest, 0)
  const totals = full.map((d, i) =>
    Math.round(
      (Object.values(d).reduce((s, v) => s + v, 0) - Object.values(empty[i]!).reduce((s, v) => s + v, 0)) /
        batch,
    ),
  )
  console.log(
    `cells a request (${get ? `GET ${get}` : governed ? 'governed' : 'plain'}, ${stream ? 'stream' : 'non-stream'}; ${rounds} rounds of ${batch}; round totals ${totals.join(' ')}): ${total.toFixed(1)}`,
  )
  for (const r of rows) console.log(`  ${r.t.padEnd(36)} ${r.perRequest.toFixed(2)}`)
  console.log(`load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`)
} finally {
  await gw.stop()
  await mocks.stop()
  ws.remove()
}
