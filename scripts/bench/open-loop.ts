/**
 * @module
 * Open-loop generator (what wrk2 would do; wrk2 is not packaged in Debian). Request i is
 * scheduled at t0 + i / rate whatever happened to earlier ones, and its latency is measured
 * from that scheduled time, so a stall in the server shows up in the percentiles instead of
 * silently lowering the rate (no coordinated omission). Latency is to the last body byte for a
 * JSON answer and to the first body byte for a stream. Runs as its own process.
 */
import { join } from 'node:path'
import { runChild } from './processes.ts'
import { emitResult, quantile, sortedCopy, type Target } from './workload.ts'

interface Args {
  target: Target
  rate: number
  durationS: number
  /** Sent at the same rate before the measured part, not counted. */
  warmupS: number
  stream: boolean
}

export interface OpenLoopResult {
  requests: number
  rate: number
  achievedRate: number
  p50Ms: number
  p90Ms: number
  p99Ms: number
  maxMs: number
  /** For streams: scheduled time to the end of the stream, p50. */
  fullP50Ms: number | null
  errors: number
  errorDetail: Record<string, number>
  /** How late the generator itself sent (actual − scheduled): its own noise floor. */
  sendLagP50Ms: number
  sendLagP99Ms: number
}

export function runOpenLoop(
  target: Target,
  rate: number,
  durationS: number,
  warmupS: number,
  stream: boolean,
): Promise<OpenLoopResult> {
  const args: Args = { target, rate, durationS, warmupS, stream }
  return runChild<OpenLoopResult>(
    join(import.meta.dir, 'open-loop.ts'),
    args,
    (warmupS + durationS + 60) * 1000,
  )
}

async function main(a: Args): Promise<void> {
  const interval = 1000 / a.rate
  const warm = Math.round(a.rate * a.warmupS)
  const total = warm + Math.round(a.rate * a.durationS)
  const init = { method: 'POST', headers: a.target.headers, body: a.target.body }
  const lat: number[] = []
  const full: number[] = []
  const lag: number[] = []
  const errors: Record<string, number> = {}
  const pending = new Set<Promise<void>>()

  const one = async (i: number, scheduled: number): Promise<void> => {
    const counted = i >= warm
    try {
      const res = await fetch(a.target.url, init)
      if (res.status >= 300) {
        await res.arrayBuffer()
        if (counted) errors[`status_${res.status}`] = (errors[`status_${res.status}`] ?? 0) + 1
        return
      }
      if (a.stream) {
        const reader = res.body!.getReader()
        await reader.read()
        const first = performance.now()
        while (!(await reader.read()).done) {}
        if (counted) {
          lat.push(first - scheduled)
          full.push(performance.now() - scheduled)
        }
      } else {
        await res.arrayBuffer()
        if (counted) lat.push(performance.now() - scheduled)
      }
    } catch (err) {
      if (counted)
        errors[`network_${(err as Error).name}`] = (errors[`network_${(err as Error).name}`] ?? 0) + 1
    }
  }

  const t0 = performance.now() + 20
  for (let i = 0; i < total; i++) {
    const scheduled = t0 + i * interval
    const wait = scheduled - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    if (i >= warm) lag.push(performance.now() - scheduled)
    const p = one(i, scheduled)
    pending.add(p)
    void p.finally(() => pending.delete(p))
  }
  await Promise.all(pending)
  const measuredS = (performance.now() - (t0 + warm * interval)) / 1000
  const sorted = sortedCopy(lat)
  const lags = sortedCopy(lag)
  const errorCount = Object.values(errors).reduce((x, y) => x + y, 0)
  emitResult({
    requests: lat.length + errorCount,
    rate: a.rate,
    achievedRate: (lat.length + errorCount) / measuredS,
    p50Ms: quantile(sorted, 0.5),
    p90Ms: quantile(sorted, 0.9),
    p99Ms: quantile(sorted, 0.99),
    maxMs: quantile(sorted, 1),
    fullP50Ms: a.stream ? quantile(sortedCopy(full), 0.5) : null,
    errors: errorCount,
    errorDetail: errors,
    sendLagP50Ms: quantile(lags, 0.5),
    sendLagP99Ms: quantile(lags, 0.99),
  } satisfies OpenLoopResult)
}

if (import.meta.main) await main(JSON.parse(process.argv[2]!) as Args)
