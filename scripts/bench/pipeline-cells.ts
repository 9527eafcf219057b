/**
 * @module
 * The cells a plain chat request allocates in the pipeline alone, exactly (issue 46, stop 62):
 * `buildDeps` on a config whose one provider is a `Bun.serve` in this process answering the fast
 * mock's JSON or stream (`mock-upstream/wire.ts`), and `Pipeline.handle` called N times one at a
 * time, each answer read — no HTTP server in front, no framework, no access line (those are
 * `alloc-count.ts`'s, through a real gateway). JSC's cell counts around each batch after a full
 * collection; the median of each type over the rounds. A round a collection or a periodic task
 * (the usage flush, a timer) falls in counts more or less: the medians by type leave it out, which
 * is why this is finer than `alloc-count.ts` (its round totals move in steps of ~20 a request). The
 * `Request` each call is given is counted too (~16 cells: `--only-request` counts it alone).
 *
 * bun scripts/bench/pipeline-cells.ts [--root CHECKOUT] [--stream] [--n 200] [--rounds 7] [--only-request]
 */
import { heapStats } from 'bun:jsc'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { buildCompletion, buildStreamFrames } from '../mock-upstream/wire.ts'
import { option } from './argv.ts'
import { REPO } from './processes.ts'
import { chatBody } from './workload.ts'

const root = resolve(option('--root') ?? REPO)
const stream = process.argv.includes('--stream')
const onlyRequest = process.argv.includes('--only-request')
// A stream allocates more: a smaller batch keeps a collection out of most rounds.
const n = Number(option('--n') ?? (stream ? 40 : 200))
const rounds = Number(option('--rounds') ?? 7)

const { buildDeps } = await import(`${root}/src/app/build.ts`)
const { parseConfig } = await import(`${root}/src/config/index.ts`)
const { Pipeline } = await import(`${root}/src/pipeline/run.ts`)
const { chatSurface } = await import(`${root}/src/surfaces/chat/index.ts`)
const { silentLogger } = await import(`${root}/src/util/log.ts`)

const shape = { model: 'bench', created: 1, words: 20, usage: true, tools: [] }
const json = buildCompletion(shape)
const events = Buffer.concat(buildStreamFrames(shape))
const upstream = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const asked = await req.text()
    return asked.includes('"stream":true')
      ? new Response(events, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } })
      : new Response(json, { headers: { 'content-type': 'application/json' } })
  },
})
const dir = mkdtempSync(join(tmpdir(), 'pipeline-cells-'))
const model = {
  name: 'bench',
  context_window: 128_000,
  max_output_tokens: 4096,
  features: ['streaming', 'tools', 'json_mode', 'system_messages'],
}
const config = parseConfig(
  {
    server: { host: '127.0.0.1', port: 0 },
    admin: { token: 'pipeline-cells-admin-token-0123456789ab' },
    database: { path: join(dir, 'switchyard.db') },
    providers: [
      { prefix: 'mock', kind: 'openai', base_url: `${upstream.url}v1`, api_key: 'x', models: [model] },
    ],
    plans: { unlimited: { rpm: null, rpd: null, models: ['*'] } },
    default_plan: 'unlimited',
  },
  'pipeline-cells',
)
const deps = buildDeps(config, { log: silentLogger })
await deps.accounts.createAccount('bench', 'unlimited')
const { key } = await deps.accounts.createKey('bench')
const pipeline = new Pipeline(deps)
const body = chatBody('mock/bench', stream)
// Declared, as a client's body reaches the server (an undeclared one is read as a stream).
const init = {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    authorization: `Bearer ${key}`,
    'content-length': String(Buffer.byteLength(body)),
  },
  body,
}

async function one(): Promise<void> {
  const request = new Request('http://127.0.0.1/v1/chat/completions', init)
  if (onlyRequest) {
    await request.text()
    return
  }
  const res: Response = await pipeline.handle(chatSurface, request, null, { 'x-request-id': 'req_cells' })
  await res.text()
  if (res.status !== 200) throw new Error(`status ${res.status}`)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
try {
  for (let i = 0; i < 3000; i++) await one()
  await deps.recorder.flush()
  const byRound: Record<string, number>[] = []
  for (let r = 0; r < rounds; r++) {
    Bun.gc(true)
    const before = { ...heapStats().objectTypeCounts }
    for (let i = 0; i < n; i++) await one()
    const after = heapStats().objectTypeCounts
    const d: Record<string, number> = {}
    for (const t in after) d[t] = ((after[t] ?? 0) - (before[t] ?? 0)) / n
    byRound.push(d)
  }
  const types = [...new Set(byRound.flatMap((d) => Object.keys(d)))]
    .map((t) => ({ t, cells: median(byRound.map((d) => d[t] ?? 0)) }))
    .filter((r) => r.cells >= 0.1)
    .sort((a, b) => b.cells - a.cells)
  const totals = byRound.map((d) =>
    Object.values(d)
      .reduce((s, v) => s + v, 0)
      .toFixed(1),
  )
  const sum = types.reduce((s, r) => s + r.cells, 0)
  const what = onlyRequest ? 'the Request alone' : `plain ${stream ? 'stream' : 'non-stream'}`
  console.log(
    `cells a request, pipeline only (${what}; ${rounds} rounds of ${n}; round totals ${totals.join(' ')}): ${sum.toFixed(1)} by type`,
  )
  for (const r of types) console.log(`  ${r.t.padEnd(36)} ${r.cells.toFixed(2)}`)
} finally {
  await deps.recorder.flush()
  await deps.store.close()
  upstream.stop(true)
  rmSync(dir, { recursive: true, force: true })
}
