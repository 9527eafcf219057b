/**
 * @module
 * The c=1 lane's collection probe (issue 46): what the gateway's garbage collector does per
 * request, which the loop's timeline cannot see (loop-trace.ts samples no collection by default).
 * It serves a gateway with JSC's own GC log on (`BUN_JSC_logGC=1`, one line a collection with its
 * pause), sends one request at a time of each kind the lane times (plain non-stream, governed
 * non-stream, governed stream), and per kind counts the serving thread's collections and their
 * pauses: requests per collection × pause is the share of the tail a collector makes.
 * `--baseline DIR` serves another checkout's gateway too, in alternating blocks; `--env K=V` adds
 * to the gateways' environment (JSC's heap options, `BUN_JSC_*`); `--preload FILE` runs a preload
 * in the serving process. Counts, not times, are what it is for: a collection's pause moves with
 * the machine's load, how many requests there are between two collections does not.
 *
 * bun scripts/bench/c1-gc.ts [--requests N] [--baseline DIR] [--env K=V] [--preload FILE]
 */
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FULL_MODEL, type Gateway, startGateway, startMocks } from './processes.ts'
import { meteredKey } from './tokens.ts'
import { chatTarget, quantile, sortedCopy, type Target } from './workload.ts'

interface Gc {
  heap: string
  kind: string
  heapKb: number
  pauseMs: number
}

/** Collections logged past byte `from` of the gateway's log (JSC: `[GC<heap>: START M <n>kb => <Kind>… p=<ms>ms`). */
function collections(log: string, from: number): Gc[] {
  const text = readFileSync(log, 'utf8').slice(from)
  const out: Gc[] = []
  for (const m of text.matchAll(/GC<(0x[0-9a-f]+)>: START \w+ (\d+)kb => (\w+)[^\n]*?p=([\d.]+)ms/g))
    out.push({ heap: m[1]!, heapKb: Number(m[2]), kind: m[3]!, pauseMs: Number(m[4]) })
  return out
}

async function one(t: Target, stream: boolean): Promise<number> {
  const t0 = performance.now()
  const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body })
  if (stream)
    for await (const _ of res.body!) {
    }
  else await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`status ${res.status}`)
  return (performance.now() - t0) * 1000
}

const argv = process.argv.slice(2)
const arg = (name: string) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const N = Number(arg('--requests') ?? 1000)
const baseline = arg('--baseline')
/** `--env K=V` (repeatable): more environment for the gateways (JSC's heap options, `BUN_JSC_*`). */
const extraEnv = Object.fromEntries(
  argv.flatMap((a, i) =>
    a === '--env' && argv[i + 1]?.includes('=') ? [argv[i + 1]!.split(/=(.*)/s, 2)] : [],
  ),
)

const mocks = await startMocks(20)
const gateways: { name: string; gw: Gateway; governed: string }[] = []
try {
  for (const [name, root] of [['now', undefined], ...(baseline ? [['before', baseline]] : [])] as const) {
    const dir = mkdtempSync(join(tmpdir(), `c1-gc-${name}-`))
    const gw = await startGateway({ dir }, mocks, {
      binary: false,
      // The cap set, so `serve` does not re-run itself: the log (and a preload) is the serving process's.
      env: { ...extraEnv, BUN_JSC_logGC: '1', BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
      root,
      bunFlags: arg('--preload') ? ['--preload', arg('--preload')!] : undefined,
    })
    gateways.push({ name, gw, governed: await meteredKey(gw, dir, false, 'bench-lane') })
  }
  const kinds = [
    ['plain/nonstream', 'mock/bench', false, false],
    ['governed/nonstream', `mock/${FULL_MODEL}`, false, true],
    ['governed/stream', `mock/${FULL_MODEL}`, true, true],
  ] as const
  for (const g of gateways)
    for (const [, model, stream, gov] of kinds) {
      const t = chatTarget(g.gw.url, model, stream, gov ? g.governed : g.gw.key)
      for (let i = 0; i < 200; i++) await one(t, stream)
    }
  for (const [kind, model, stream, gov] of kinds) {
    for (const g of gateways) {
      const t = chatTarget(g.gw.url, model, stream, gov ? g.governed : g.gw.key)
      await Bun.sleep(300)
      const from = statSync(g.gw.logPath).size
      const us: number[] = []
      for (let i = 0; i < N; i++) us.push(await one(t, stream))
      await Bun.sleep(300)
      const gcs = collections(g.gw.logPath, from)
      // The serving thread's heap: the largest (the checkpoint thread's is under 1 MB).
      const top = gcs.reduce<Gc | null>((m, c) => (!m || c.heapKb > m.heapKb ? c : m), null)
      const main = gcs.filter((c) => c.heap === top?.heap)
      const p = sortedCopy(main.map((c) => c.pauseMs))
      const s = sortedCopy(us)
      console.log(
        `${g.name.padEnd(6)} ${kind.padEnd(19)} ${N} requests: p50 ${Math.round(quantile(s, 0.5))} µs, p99 ${Math.round(quantile(s, 0.99))} µs; ` +
          `serving heap ${main.length} collections (${main.filter((c) => c.kind === 'FullCollection').length} full), ` +
          `${main.length ? Math.round(N / main.length) : '∞'} requests each, pause p50 ${quantile(p, 0.5).toFixed(2)} ms max ${(p.at(-1) ?? 0).toFixed(2)} ms, heap ${Math.round((top?.heapKb ?? 0) / 1024)} MB; ` +
          `other heaps ${gcs.length - main.length}`,
      )
    }
  }
} finally {
  for (const g of gateways) await g.gw.stop()
  await mocks.stop()
}
