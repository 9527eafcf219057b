/**
 * @module
 * The hostile-input load rows (issue 42, DESIGN §16): a real `serve` process, one key, many large
 * bodies at once from a generator process of its own, and `/healthz` probed from here meanwhile.
 * Per run: the serving process's peak RSS over its RSS before (VmHWM, reset between runs through
 * `/proc/<pid>/clear_refs`) against the bytes in flight, `/healthz`'s p99, and the serving
 * process's CPU time per request (what collecting dead bodies costs shows there).
 * - hostile: 48 × 10 MB chat bodies to a model whose context they exceed (each refused, 400;
 *   invalid requests not counted toward a suspension, so the key keeps sending), and 16 × 9 MB
 *   `/v1/messages/count_tokens` bodies (counted by the gateway, 200);
 * - valid traffic of the same size: the same 48 × 10 MB and 16 × 9 MB chat bodies to a model whose
 *   context holds them, answered by the mock upstream (forwarded as sent).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cpuMicros, statusBytes } from './proc-stats.ts'
import { type Gateway, type Mocks, REPO, startGateway, type Workspace } from './processes.ts'
import { fmt, type Row, row } from './report.ts'

const MB = 1024 * 1024

export interface FloodResult {
  name: string
  concurrency: number
  mb: number
  seconds: number
  statuses: Record<string, number>
  sent: number
  /** Peak RSS over the RSS before, bytes. */
  growthBytes: number
  healthzP99Ms: number
  probes: number
  /** The serving process's CPU time (user + system) per request answered, µs. */
  cpuUsPerRequest: number
}

interface Flood {
  name: string
  path: string
  model: string
  concurrency: number
  mb: number
}

const FLOODS: Flood[] = [
  {
    name: 'hostile: chat bodies past the context',
    path: '/v1/chat/completions',
    model: 'hdemo/echo',
    concurrency: 48,
    mb: 10,
  },
  {
    name: 'hostile: count_tokens',
    path: '/v1/messages/count_tokens',
    model: 'hdemo/echo',
    concurrency: 16,
    mb: 9,
  },
  {
    name: 'valid: chat answered',
    path: '/v1/chat/completions',
    model: 'mock/bench-big',
    concurrency: 48,
    mb: 10,
  },
  {
    name: 'valid: chat answered',
    path: '/v1/chat/completions',
    model: 'mock/bench-big',
    concurrency: 16,
    mb: 9,
  },
]

/** The bench config plus a demo model the bodies overflow and a mock model whose context holds them. */
function hostileDoc(doc: Record<string, unknown>): Record<string, unknown> {
  const providers = (doc.providers as Array<Record<string, unknown>>).map((p) =>
    p.prefix === 'mock'
      ? {
          ...p,
          models: [
            ...(p.models as unknown[]),
            {
              name: 'bench-big',
              upstream_name: 'bench',
              context_window: 4_000_000,
              max_output_tokens: 4096,
              features: ['streaming'],
            },
          ],
        }
      : p,
  )
  providers.push({
    prefix: 'hdemo',
    kind: 'demo',
    models: [{ name: 'echo', context_window: 8192, max_output_tokens: 1024, features: ['streaming'] }],
  })
  return { ...doc, providers, limits: { suspension: { count_invalid: false } } }
}

export async function runHostileLoad(
  bench: Workspace,
  mocks: Mocks,
  opts: { binary: boolean; env?: Record<string, string>; seconds: number; log: (m: string) => void },
): Promise<FloodResult[]> {
  // Under the bench's own workspace (removed with it), apart from the main gateway's config and database.
  const gw = await startGateway({ dir: join(bench.dir, 'hostile') }, mocks, {
    binary: opts.binary,
    env: opts.env,
    doc: hostileDoc,
  })
  try {
    // Each path once, small: count_tokens' tokenizer loads on first use, which is not a body's cost.
    for (const path of ['/v1/chat/completions', '/v1/messages/count_tokens']) {
      await post(
        gw,
        path,
        JSON.stringify({ model: 'hdemo/echo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      )
    }
    const results: FloodResult[] = []
    for (const f of FLOODS) {
      opts.log(`  ${f.name}: ${f.concurrency} × ${f.mb} MB for ${opts.seconds} s ...`)
      results.push(await flood(gw, f, opts.seconds))
    }
    return results
  } finally {
    await gw.stop()
  }
}

async function post(gw: Gateway, path: string, body: string): Promise<void> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body,
  })
  await res.arrayBuffer()
}

async function flood(gw: Gateway, f: Flood, seconds: number): Promise<FloodResult> {
  // The idle collector (src/app/serve.ts) runs after a quiet second; then the high-water mark restarts.
  await Bun.sleep(2_500)
  writeFileSync(`/proc/${gw.pid}/clear_refs`, '5')
  const before = statusBytes(gw.pid, 'VmRSS')
  const cpuBefore = cpuMicros(gw.pid)
  const load = Bun.spawn(
    [
      'nice',
      '-n',
      '10',
      process.execPath,
      join(REPO, 'test/support/body-flood.ts'),
      gw.url,
      gw.key,
      f.path,
      String(f.concurrency),
      String(f.mb),
      String(seconds),
      f.model,
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  )
  let done = false
  void load.exited.then(() => {
    done = true
  })
  const ms: number[] = []
  while (!done) {
    const t0 = performance.now()
    const res = await fetch(`${gw.url}/healthz`)
    await res.arrayBuffer()
    ms.push(res.ok ? performance.now() - t0 : Number.POSITIVE_INFINITY)
    await Bun.sleep(10)
  }
  const out = JSON.parse(await new Response(load.stdout).text()) as {
    statuses: Record<string, number>
    sent: number
  }
  const cpuUs = cpuMicros(gw.pid) - cpuBefore
  ms.sort((a, b) => a - b)
  return {
    name: f.name,
    concurrency: f.concurrency,
    mb: f.mb,
    seconds,
    statuses: out.statuses,
    sent: out.sent,
    growthBytes: statusBytes(gw.pid, 'VmHWM') - before,
    healthzP99Ms: ms.length ? ms[Math.min(ms.length - 1, Math.floor(0.99 * ms.length))]! : Number.NaN,
    probes: ms.length,
    cpuUsPerRequest: cpuUs / Math.max(1, out.sent),
  }
}

/** Growth against DESIGN §16's 1.5 × the bytes in flight; `/healthz` p99 for information. */
export function hostileLoadRows(results: FloodResult[]): Row[] {
  return results.map((r) => {
    const inFlight = r.concurrency * r.mb * MB
    const ratio = r.growthBytes / inFlight
    return row(
      `${r.name}, ${r.concurrency} × ${r.mb} MB for ${r.seconds} s: peak RSS growth (× in flight), /healthz p99, CPU per request`,
      `+${fmt(r.growthBytes / MB)} MB (${fmt(ratio, 2)} ×), p99 ${fmt(r.healthzP99Ms)} ms over ${r.probes} probes, ${fmt(r.cpuUsPerRequest / 1000)} ms CPU a request; ${JSON.stringify(r.statuses)}`,
      ratio,
      { op: '<=', value: 1.5, text: '≤ 1.5 × in flight' },
    )
  })
}
