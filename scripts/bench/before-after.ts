/**
 * @module
 * A change's CPU per request beside the code before it, in the same minutes (BENCHMARKS.md: on a
 * shared host only interleaved figures compare). Gateways of two checkouts — this one and another
 * (`--before DIR`: an export of main, say `git archive <commit> | tar -x -C DIR` with
 * `node_modules` linked in) — each serve the priced mock route; every round loads each cell in
 * turn (each gateway's two cells swapped every other round), c16, a fixed number of requests,
 * and reads each gateway's CPU (all threads) per request. A round's ratio is taken within one
 * gateway, so the host's drift between rounds falls on both sides of it.
 *
 * - `--row tokens`: each gateway's metered key (TPM, TPD and a budget) over its plain key — the
 *   tokens row's ratio (scripts/bench/tokens.ts), per checkout.
 * - `--row telemetry`: per checkout, a gateway with telemetry on (OTLP protobuf to a local sink,
 *   sample 1.0) over one without, both on the metered plan — the signals row's ratio
 *   (scripts/bench/signals.ts).
 *
 * Beside each ratio, the same ratio of the serving thread's CPU alone (the process's main thread:
 * the request's JavaScript), without JSC's compiler threads, GC helpers and the HTTP client's
 * thread: a route with more code keeps the JIT busy for the first tens of thousands of requests
 * (BENCHMARKS.md, tokens and money), which the whole process's figure counts.
 *
 * bun scripts/bench/before-after.ts --before DIR --row tokens|telemetry [--stream] [--rounds 10] [--requests 2000] [--warm N]
 *
 * `--warm N`: requests a cell before the first round (default half a round's, at least 500); the
 * JIT's work on a route's code then falls more or less inside the rounds.
 */
import { readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { cpuMicros, ticksPerSecond } from './proc-stats.ts'
import { type Gateway, METERED_PLAN, PRICED_MODEL, startGateway, startMocks, workspace } from './processes.ts'
import { fmt } from './report.ts'
import { meteredKey } from './tokens.ts'
import { chatTarget } from './workload.ts'

const CONCURRENCY = 16

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i === -1 ? undefined : process.argv[i + 1]
}

const before = option('--before')
const row = option('--row')
if (!before || (row !== 'tokens' && row !== 'telemetry')) {
  console.error(
    'usage: bun scripts/bench/before-after.ts --before DIR --row tokens|telemetry [--stream] [--rounds N] [--requests N] [--warm N]',
  )
  process.exit(2)
}
const stream = process.argv.includes('--stream')
const rounds = Number(option('--rounds') ?? 10)
const requests = Number(option('--requests') ?? 2000)
const warm = Number(option('--warm') ?? Math.max(500, requests / 2))

const sink = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    await req.arrayBuffer()
    return new Response(null)
  },
})
const mocks = await startMocks(20)

/** One gateway serving one route (a key): a cell of the table. */
interface Cell {
  name: string
  gw: Gateway
  key: string
  cpu: number[]
  /** The serving (main) thread's share of `cpu`. */
  main: number[]
}

/** utime + stime of the process's main thread (its tid is its pid), µs. */
function mainThreadMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / ticksPerSecond()
}
const gateways: Array<{ gw: Gateway; remove(): void }> = []

async function gateway(root: string | undefined, telemetry: boolean | null): Promise<Gateway> {
  const ws = workspace()
  const metered = (d: Record<string, unknown>) => ({
    ...d,
    plans: { ...(d.plans as object), metered: METERED_PLAN },
  })
  const gw = await startGateway(ws, mocks, {
    binary: false,
    ...(root ? { root } : {}),
    ...(telemetry === null
      ? {}
      : {
          plan: 'metered',
          doc: (d) =>
            telemetry
              ? {
                  ...metered(d),
                  telemetry: {
                    otlp_endpoint: `http://127.0.0.1:${sink.port}`,
                    protocol: 'http/protobuf',
                    sample_ratio: 1,
                  },
                }
              : metered(d),
        }),
  })
  gateways.push({ gw, remove: ws.remove })
  return gw
}

const cells: Cell[] = []
/** Pairs of cells whose ratio is the row's: [numerator, denominator, label]. */
const ratios: Array<[Cell, Cell, string]> = []
for (const [side, root] of [
  ['before', before],
  ['after', undefined],
] as const) {
  if (row === 'tokens') {
    const gw = await gateway(root, null)
    const plain = { name: `${side} plain`, gw, key: gw.key, cpu: [], main: [] }
    const metered = {
      name: `${side} metered`,
      gw,
      key: await meteredKey(gw, dirname(gw.dbPath), false),
      cpu: [],
      main: [],
    }
    cells.push(plain, metered)
    ratios.push([metered, plain, `${side}: metered ÷ plain`])
  } else {
    const off = await gateway(root, false)
    const on = await gateway(root, true)
    const offCell = { name: `${side} off`, gw: off, key: off.key, cpu: [], main: [] }
    const onCell = { name: `${side} telemetry`, gw: on, key: on.key, cpu: [], main: [] }
    cells.push(offCell, onCell)
    ratios.push([onCell, offCell, `${side}: telemetry ÷ off`])
  }
}

/** `n` requests at c16 to the cell; the gateway's CPU per request over them, all threads and the main one (µs). */
async function load(cell: Cell, n: number): Promise<[number, number]> {
  const t = chatTarget(cell.gw.url, `mock/${PRICED_MODEL}`, stream, cell.key)
  let left = n
  const cpu0 = cpuMicros(cell.gw.pid)
  const main0 = mainThreadMicros(cell.gw.pid)
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) {
        const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body })
        if (res.status !== 200) throw new Error(`${cell.name}: ${res.status} ${await res.text()}`)
        await res.arrayBuffer()
      }
    }),
  )
  return [(cpuMicros(cell.gw.pid) - cpu0) / n, (mainThreadMicros(cell.gw.pid) - main0) / n]
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!
const load1 = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]
try {
  console.log(
    `${row}, ${stream ? 'stream' : 'non-stream'}: ${rounds} rounds of ${requests} requests a cell, load ${load1()}`,
  )
  // Warm: each cell's code compiled before any round counts.
  for (const c of cells) await load(c, warm)
  for (let r = 0; r < rounds; r++) {
    // Each gateway's two cells swapped every other round (bp bm ap am, bm bp am ap), not the
    // whole order reversed (… am | am ap bm bp | bp …): that ran `after metered` and `before
    // plain` twice in a row and made `before metered` and `after plain` the only cells to run
    // first after the other gateway's turn, every round the same way round — an A/A run (one
    // checkout on both sides) read after ÷ before 0.769 ×, all ten rounds below 1. Now each cell
    // runs first after the other gateway's turn every other round, and none twice in a row.
    const order = r % 2 ? [cells[1]!, cells[0]!, cells[3]!, cells[2]!] : cells
    for (const c of order) {
      const [cpu, main] = await load(c, requests)
      c.cpu.push(cpu)
      c.main.push(main)
    }
  }
  for (const [num, den, label] of ratios) {
    for (const part of ['cpu', 'main'] as const) {
      const each = num[part].map((v, i) => v / den[part][i]!)
      console.log(
        `${label}${part === 'main' ? ' (serving thread)' : ''}: ${fmt(median(each), 3)} × (${fmt(Math.min(...each), 3)}–${fmt(Math.max(...each), 3)}); ${Math.round(median(num[part]))} vs ${Math.round(median(den[part]))} µs`,
      )
    }
  }
  // The change itself, round by round: each round's after-ratio over its before-ratio (the two
  // gateways loaded in the same minutes), so the host's drift between rounds cancels too.
  if (ratios.length === 2) {
    const [b, a] = ratios as [[Cell, Cell, string], [Cell, Cell, string]]
    for (const part of ['cpu', 'main'] as const) {
      const each = a[0][part].map((v, i) => v / a[1][part][i]! / (b[0][part][i]! / b[1][part][i]!))
      console.log(
        `after ÷ before, round by round${part === 'main' ? ' (serving thread)' : ''}: ${fmt(median(each), 3)} × (${fmt(Math.min(...each), 3)}–${fmt(Math.max(...each), 3)})`,
      )
    }
  }
  console.log(`load at the end ${load1()}`)
} finally {
  for (const g of gateways) {
    await g.gw.stop()
    g.remove()
  }
  await mocks.stop()
  sink.stop(true)
}
