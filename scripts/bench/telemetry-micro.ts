/**
 * @module
 * The per-request span work in process (issue 43's bench miss, BENCHMARKS.md): a request's trace
 * begun from a request with no `traceparent`, routed, one attempt with its `traceparent`, finished,
 * and both spans encoded into the exporter's batch (protobuf, as the bench's gateway); each batch
 * of 512 is sealed and POSTed to a sink in another process (its CPU is not counted). Prints the
 * process's CPU (user + system: a shared machine's waits do not count) per request, best and
 * median of the runs.
 *
 * `--before DIR`: the tracer of another checkout (an export of main, say) loaded beside this one,
 * in the same process, their runs alternated (which goes first alternating too), so the host's
 * load falls on both alike; each printed with its best and median.
 *
 * `--churn`: as a server runs it, not in a tight loop: 20 MB kept live, ~40 KB of short-lived
 * garbage made a request, the event loop turned every 16 requests (timers, the export), and a
 * third side with no tracer at all; each side's extra is its median less that one's. The span
 * work then pays for its GC and for running between other code (the tight loop's figure is about
 * half of this one's).
 *
 * bun scripts/bench/telemetry-micro.ts [requests] [--before DIR] [--runs N] [--churn]
 */
import { resolve } from 'node:path'
import { Tracer } from '../../src/telemetry/index.ts'

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i === -1 ? undefined : process.argv[i + 1]
}
const N = Number(process.argv[2]?.startsWith('--') ? 50_000 : (process.argv[2] ?? 50_000))
const RUNS = Number(option('--runs') ?? 7)
const before = option('--before')
const churn = process.argv.includes('--churn')

const SINK = `const s = Bun.serve({ hostname: '127.0.0.1', port: 0, async fetch(r) { await r.arrayBuffer(); return new Response(null) } }); console.log(s.port)`
const sink = Bun.spawn([process.execPath, '-e', SINK], { stdout: 'pipe' })
const reader = sink.stdout.getReader()
let first = ''
while (!first.includes('\n')) {
  const { value, done } = await reader.read()
  if (done) throw new Error('the sink did not start')
  first += new TextDecoder().decode(value)
}
const port = Number(first.trim())
const log = { warn: console.warn, info() {}, error: console.error, debug() {} } as any
const tracerOf = (T: typeof Tracer) =>
  new T(
    {
      tracesUrl: `http://127.0.0.1:${port}/v1/traces`,
      headers: {},
      protocol: 'http/protobuf',
      sampleRatio: 1,
      exportIntervalMs: 1_000,
    } as any,
    log,
    '0.0.0-bench',
    1_000,
  )
const request = new Request('http://127.0.0.1/v1/chat/completions', {
  method: 'POST',
  headers: { authorization: 'Bearer sk-x', 'content-type': 'application/json' },
})

function one(tracer: Tracer, i: number) {
  const trace = tracer.begin(request, 'chat')!
  trace.routed({
    model: 'mock/bench-priced',
    providerKind: 'openai',
    account: 'bench',
    keyId: 'key_0123456789abcdef',
    surface: 'chat',
    requestId: `req_${i}`,
    clientRequestId: null,
  })
  const span = trace.attempt({
    providerKind: 'openai',
    provider: 'mock',
    model: 'mock/bench-priced',
    upstreamModel: 'bench-priced',
    key: 0,
    n: 1,
  })
  if (span.traceparent.length !== 55) throw new Error('traceparent')
  trace.finish({
    status: 200,
    errorCode: null,
    usage: { prompt_tokens: 10, completion_tokens: 12 },
    responseModel: 'mock/bench-priced',
    upstreamModel: 'bench-priced',
    costMicros: 3400,
    attempts: 1,
  })
}

/** `--churn`: what a server keeps live (20 MB of small objects), and a request's own garbage. */
const live = churn
  ? Array.from({ length: 100_000 }, (_, i) => ({ a: `x${i}`, b: [i, i + 1], c: { d: i } }))
  : []
let kept = ''
function garbage(i: number) {
  const out: unknown[] = []
  for (let j = 0; j < 150; j++) out.push({ j, s: `k${i}-${j}`, arr: [j, j, j] })
  kept = JSON.stringify(out.slice(0, 20))
}

/** One run: N requests' span work (none: `tracer` null), the process's CPU per request (µs). */
async function run(tracer: Tracer | null): Promise<number> {
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < N; i++) {
    if (churn) {
      garbage(i)
      if (tracer) one(tracer, i)
      if (i % 16 === 15) await new Promise((r) => setImmediate(r))
    } else {
      one(tracer!, i)
      // Let each batch of 512 go (to nowhere) as the server's event loop would.
      if (i % 512 === 511) await tracer!.exporter.flush()
    }
  }
  await tracer?.exporter.flush()
  const cpu = process.cpuUsage(cpu0)
  return (cpu.user + cpu.system) / N
}

const sides: Array<{ name: string; tracer: Tracer | null; runs: number[] }> = [
  { name: 'this checkout', tracer: tracerOf(Tracer), runs: [] },
]
if (churn) sides.push({ name: 'no tracer', tracer: null, runs: [] })
if (before) {
  const other = await import(resolve(before, 'src/telemetry/index.ts'))
  sides.push({ name: `before (${before})`, tracer: tracerOf(other.Tracer), runs: [] })
}
for (let r = 0; r < RUNS; r++) {
  const order = r % 2 === 0 ? sides : [...sides].reverse()
  for (const side of order) side.runs.push(await run(side.tracer))
}
sink.kill()
const median = (runs: number[]) => [...runs].sort((a, b) => a - b)[Math.floor(runs.length / 2)]!
const floor = churn ? median(sides.find((s) => !s.tracer)!.runs) : 0
for (const { name, tracer, runs } of sides) {
  const best = Math.min(...runs)
  const extra = churn && tracer ? `; extra over no tracer ${(median(runs) - floor).toFixed(2)} µs` : ''
  console.log(
    `${name}: ${churn ? 'a request with its span work' : 'span work per request'} (CPU): best ${best.toFixed(2)} µs, median ${median(runs).toFixed(2)} µs${extra} (${N} requests a run, ${runs.length} runs${churn ? `, ${live.length} objects live, ${kept.length} B kept` : ''})`,
  )
}
