/**
 * @module
 * The per-request span work in process (issue 43's bench miss, BENCHMARKS.md): a request's trace
 * begun from a request with no `traceparent`, routed, one attempt with its `traceparent`, finished,
 * and both spans encoded into the exporter's batch (protobuf, as the bench's gateway); each batch
 * of 512 is sealed and POSTed to a sink in another process (its CPU is not counted). Prints the
 * process's CPU (user + system: a shared machine's waits do not count) per request, best and
 * median of seven runs.
 *
 * bun scripts/bench/telemetry-micro.ts [requests]
 */
import { Tracer } from '../../src/telemetry/index.ts'

const N = Number(process.argv[2] ?? 50_000)
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
const tracer = new Tracer(
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

function one(i: number) {
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

const results: number[] = []
for (let run = 0; run < 7; run++) {
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < N; i++) {
    one(i)
    // Let each batch of 512 go (to nowhere) as the server's event loop would.
    if (i % 512 === 511) await tracer.exporter.flush()
  }
  const cpu = process.cpuUsage(cpu0)
  results.push((cpu.user + cpu.system) / N)
}
results.sort((a, b) => a - b)
sink.kill()
console.log(
  `span work per request (CPU): best ${results[0]!.toFixed(2)} µs, median ${results[3]!.toFixed(2)} µs (${N} requests a run, 7 runs)`,
)
