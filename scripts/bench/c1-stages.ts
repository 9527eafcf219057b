/**
 * @module
 * The c=1 per-stage timeline (issue 46, stop 58): plain and governed, non-stream and stream, one
 * request at a time in interleaved rounds (c1-client.ts), through gateways under stage-marks.ts.
 * For each request, the µs from the client's send to the first of each stage mark the gateway's
 * loop made inside it (and to the mock's arrival, and the client's first content byte and last
 * byte), and how many turns-worth of marks it saw (setImmediate, setTimeout, queueMicrotask, reads,
 * posts to a worker); per target the median of each over every request. Also when the loop's
 * turn after the previous request's response came, counted from this request's send (late: the
 * loop was still busy with the last one when this one was sent), and whether the mock saw a new
 * connection. `--gw NAME=DIR` adds another checkout's gateway (a before), its targets in the same
 * rounds. `STAGES_DUMP=1` prints three requests' marks a target, in order.
 *
 * `bun scripts/bench/c1-stages.ts [--rounds N] [--batch N] [--steady N] [--gw NAME=DIR]...`
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type LaneTarget, runLaneClient } from './c1-client.ts'
import { chatPair, warmToSteady } from './c1-warm.ts'
import { FULL_MODEL, type Gateway, REPO, startGateway, startMocks, workspace } from './processes.ts'
import type { Ctx } from './scenarios.ts'
import { meteredKey } from './tokens.ts'
import { chatTarget, quantile, sortedCopy } from './workload.ts'

const argv = Bun.argv.slice(2)
const flag = (name: string, d: number) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv[i + 1]) : d
}
const rounds = flag('--rounds', 10)
const batch = flag('--batch', 200)
const steady = flag('--steady', 6000)
const gws: { name: string; dir: string }[] = [{ name: 'this', dir: REPO }]
for (let i = 0; i < argv.length; i++)
  if (argv[i] === '--gw') {
    const [name, dir] = argv[++i]!.split('=') as [string, string]
    gws.push({ name, dir })
  }

const STAGES = [
  'in',
  'admit',
  'tx',
  'tx-end',
  'admitted',
  'fetch',
  'up',
  'headers',
  'text',
  'read',
  'out',
  'out, the turn after',
  'end',
  'end-done',
  'record',
]
const COUNTED = [
  'in on another connection',
  'up on another connection',
  'read-call',
  'imm',
  'imm-run',
  'tmo',
  'mt',
  'read',
  'post',
  'admit',
  'record',
]

const log = (s: string) => console.log(s)
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

// The mock's arrivals: it serves in this process (its chat route a handler of `routes`).
const upMarks: number[] = []
/** Arrivals on a connection other than the last one's: a new connection (or another client's). */
const upNew: number[] = []
let lastPort = -1
const serve = Bun.serve
;(Bun as { serve: unknown }).serve = (opts: Parameters<typeof Bun.serve>[0]) => {
  const o = opts as { routes?: Record<string, Record<string, (r: Request, s: unknown) => unknown>> }
  const chat = o.routes?.['/v1/chat/completions']
  if (!chat?.POST) return serve.call(Bun, opts)
  const post = chat.POST
  const routes = {
    ...o.routes,
    '/v1/chat/completions': {
      POST(r: Request, s: { requestIP(r: Request): { port: number } | null }) {
        upMarks.push(performance.timeOrigin + performance.now())
        const port = s.requestIP(r)?.port ?? 0
        if (port !== lastPort) upNew.push(upMarks.at(-1)!)
        lastPort = port
        return post(r, s)
      },
    },
  }
  return serve.call(Bun, { ...opts, routes } as never)
}

const ws = workspace()
const mocks = await startMocks(20)
const ctx = { dir: ws.dir, mocks, wrk: null, log } as unknown as Ctx
const started: { name: string; gw: Gateway; out: string; key: string }[] = []
try {
  for (const g of gws) {
    const dir = join(ws.dir, g.name)
    const out = join(dir, 'marks.json')
    const gw = await startGateway({ dir }, mocks, {
      binary: false,
      env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096', STAGE_MARKS_OUT: out },
      bunFlags: ['--preload', join(REPO, 'scripts', 'bench', 'stage-marks.ts')],
      root: g.dir === REPO ? undefined : g.dir,
    })
    started.push({ name: g.name, gw, out, key: await meteredKey(gw, dir, false, 'bench-lane') })
  }
  await warmToSteady(
    ctx,
    started.map((s) => ({
      name: s.name,
      pid: s.gw.pid,
      targets: [chatPair(s.gw.url, 'mock/bench', s.gw.key), chatPair(s.gw.url, `mock/${FULL_MODEL}`, s.key)],
    })),
    { requests: steady, fewer: 0, untilFlat: false },
  )
  const targets: LaneTarget[] = started.flatMap((s) =>
    [false, true].flatMap((stream) => [
      {
        ...chatTarget(s.gw.url, 'mock/bench', stream, s.gw.key),
        name: `${s.name} plain/${stream ? 'stream' : 'nonstream'}`,
        stream,
      },
      {
        ...chatTarget(s.gw.url, `mock/${FULL_MODEL}`, stream, s.key),
        name: `${s.name} governed/${stream ? 'stream' : 'nonstream'}`,
        stream,
      },
    ]),
  )
  const load0 = loadavg()
  const t0 = Date.now()
  const run = await runLaneClient({ targets, rounds, batch, warm: 100, stamps: true, gaps: false })
  log(
    `${rounds} rounds × ${batch} a target, ${((Date.now() - t0) / 1000).toFixed(0)} s, load ${load0} → ${loadavg()}`,
  )
  for (const s of started) await s.gw.stop()
  for (const s of started) {
    const marks = JSON.parse(readFileSync(s.out, 'utf8')) as [number, string][]
    marks.sort((a, b) => a[0] - b[0])
    const names = targets.filter((t) => t.name.startsWith(`${s.name} `)).map((t) => t.name)
    report(s.name, marks, names, run)
  }
} finally {
  for (const s of started) await s.gw.stop().catch(() => {})
  await mocks.stop()
  ws.remove()
}

function add(to: Record<string, number[]>, key: string, v: number): void {
  const xs = to[key]
  if (xs) xs.push(v)
  else to[key] = [v]
}

type Run = Awaited<ReturnType<typeof runLaneClient>>

/** The first index in `xs` (sorted by time) at or after `t`. */
function from(xs: { 0: number }[] | number[], t: number): number {
  let lo = 0
  let hi = xs.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    const v = typeof xs[mid] === 'number' ? (xs[mid] as number) : (xs[mid] as [number])[0]
    if (v < t) lo = mid + 1
    else hi = mid
  }
  return lo
}

function report(gw: string, marks: [number, string][], names: string[], run: Run): void {
  const cols: Record<string, Record<string, number[]>> = {}
  const afterLast: Record<string, Record<string, number>> = Object.fromEntries(names.map((n) => [n, {}]))
  const sends = Object.values(run.stamps)
    .flatMap((xs) => xs.map((x) => x[0]))
    .sort((a, b) => a - b)
  const counts: Record<string, Record<string, number[]>> = {}
  for (const name of names) {
    const stamps = run.stamps[name]!
    const first = run.first[name]!.flat()
    const total = run.total[name]!.flat()
    const col: Record<string, number[]> = {}
    const cnt: Record<string, number[]> = {}
    stamps.forEach(([start, end], i) => {
      // The request's window: its send to the next request's (of any target), at most its end
      // plus 2 ms (an outcome recorded after the last byte).
      const k = from(sends, end)
      const stop = Math.min(end + 2, k < sends.length ? sends[k]! : end + 2)
      const seen: Record<string, number> = {}
      const n: Record<string, number> = {}
      let reads = 0
      const after = afterLast[name]!
      let calls = 0
      for (let k = from(marks, start); k < marks.length && marks[k]![0] < stop; k++) {
        const [t, label] = marks[k]!
        const l = label.startsWith('tx ') ? 'tx' : label
        if (l === 'read') {
          reads++
          seen[`read ${reads}`] ??= t
        }
        if (l === 'read-call') {
          calls++
          seen[`read-call ${calls}`] ??= t
        }
        // The previous request's turn after its response may fall in this one's window.
        if (l === 'out, the turn after' && seen.out === undefined) {
          seen['the previous response, the turn after'] ??= t
          continue
        }
        seen[l] ??= t
        n[l] = (n[l] ?? 0) + 1
        // What the loop still did after the client had the last byte (the next request waits for it).
        if (t > end) {
          after[l] = (after[l] ?? 0) + 1
          seen['last mark after the last byte'] = t
        }
      }
      const u = from(upMarks, start)
      if (u < upMarks.length && upMarks[u]! < stop) seen.up = upMarks[u]!
      const c = from(upNew, start)
      n['up on another connection'] = c < upNew.length && upNew[c]! < stop ? 1 : 0
      for (const [l, t] of Object.entries(seen)) add(col, l, (t - start) * 1000)
      add(col, 'client: first content byte', first[i] ?? total[i]!)
      add(col, 'client: last byte', total[i]!)
      for (const l of COUNTED) add(cnt, l, n[l] ?? 0)
    })
    // Three requests spread over the run (a quarter, half and three quarters in), each with a
    // next one to end its window: fixed indices (100, 200, 300) were past the end of a short run.
    if (process.env.STAGES_DUMP)
      for (const i of new Set([0.25, 0.5, 0.75].map((q) => Math.floor(q * (stamps.length - 1))))) {
        if (i + 1 >= stamps.length) continue
        const [start] = stamps[i]!
        const next = stamps[i + 1]![0]
        const seq = marks
          .slice(from(marks, start - 0.5), from(marks, next + 0.4))
          .map(([t, l]) => `${Math.round((t - start) * 1000)} ${l}`)
        log(
          `${name} #${i} (next send at ${Math.round((next - start) * 1000)}, last byte ${Math.round(total[i]!)}): ${seq.join(' · ')}`,
        )
      }
    cols[name] = col
    counts[name] = cnt
  }
  const med = (xs: number[] | undefined) => (xs?.length ? quantile(sortedCopy(xs), 0.5) : Number.NaN)
  log(`\n${gw}: median µs from the client's send (and in how many requests the stage was seen)`)
  log(`| stage | ${names.join(' | ')} |`)
  log(`|---|${names.map(() => '---|').join('')}`)
  const labels = [
    ...STAGES.filter((l) => l !== 'read'),
    'read-call 1',
    'read 1',
    'read-call 2',
    'read 2',
    'read 3',
    'client: first content byte',
    'client: last byte',
    'the previous response, the turn after',
    'last mark after the last byte',
  ]
  for (const l of labels) {
    const cells = names.map((n) => {
      const xs = cols[n]![l]
      const total = run.stamps[n]!.length
      return xs ? `${Math.round(med(xs))}${xs.length < total ? ` (${xs.length}/${total})` : ''}` : '—'
    })
    log(`| ${l} | ${cells.join(' | ')} |`)
  }
  for (const n of names)
    log(
      `${n}: marks after the last byte, a request: ${Object.entries(afterLast[n]!)
        .map(([l, c]) => `${l} ${(c / run.stamps[n]!.length).toFixed(2)}`)
        .join(', ')}`,
    )
  log(`\n${gw}: marks a request (mean)`)
  log(`| mark | ${names.join(' | ')} |`)
  log(`|---|${names.map(() => '---|').join('')}`)
  for (const l of COUNTED) {
    const cells = names.map((n) => {
      const xs = counts[n]![l]!
      return (xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)).toFixed(2)
    })
    log(`| ${l} | ${cells.join(' | ')} |`)
  }
}
