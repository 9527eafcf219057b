/**
 * @module
 * Closed-loop load generator in Bun, the fallback when wrk is not installed. It runs as its own
 * process (`runBunLoad` spawns this file) so its CPU is never the gateway's. Each of
 * `connections` workers sends the next request as soon as the previous answer has been read in
 * full; latency is from send to the last body byte, as wrk measures it.
 */
import { join } from 'node:path'
import { runChild } from './processes.ts'
import { emitResult, type LoadResult, quantile, sortedCopy, type Target } from './workload.ts'

interface Args {
  /** Several targets (replicas behind one generator): connection i sends to target i mod n. */
  target: Target | Target[]
  connections: number
  durationS: number
}

export function runBunLoad(
  t: Target | Target[],
  connections: number,
  durationS: number,
): Promise<LoadResult> {
  const args: Args = { target: t, connections, durationS }
  return runChild<LoadResult>(join(import.meta.dir, 'loadgen-bun.ts'), args, (durationS + 60) * 1000)
}

async function main(a: Args): Promise<void> {
  const latencies: number[] = []
  const errors: Record<string, number> = {}
  const fail = (k: string) => {
    errors[k] = (errors[k] ?? 0) + 1
  }
  const targets = Array.isArray(a.target) ? a.target : [a.target]
  const started = performance.now()
  const end = started + a.durationS * 1000
  const worker = async (_: unknown, i: number) => {
    const target = targets[i % targets.length]!
    const init = { method: 'POST', headers: target.headers, body: target.body }
    while (performance.now() < end) {
      const t0 = performance.now()
      try {
        const res = await fetch(target.url, init)
        await res.arrayBuffer()
        if (res.status >= 300) fail(`status_${res.status}`)
        else latencies.push(performance.now() - t0)
      } catch (err) {
        fail(`network_${(err as Error).name}`)
        await Bun.sleep(10) // a refused connection must not spin
      }
    }
  }
  await Promise.all(Array.from({ length: a.connections }, worker))
  const durationS = (performance.now() - started) / 1000
  const sorted = sortedCopy(latencies)
  const errorCount = Object.values(errors).reduce((x, y) => x + y, 0)
  emitResult({
    tool: 'bun',
    requests: latencies.length + errorCount,
    durationS,
    rps: (latencies.length + errorCount) / durationS,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    errors: errorCount,
    errorDetail: errors,
  } satisfies LoadResult)
}

if (import.meta.main) await main(JSON.parse(process.argv[2]!) as Args)
