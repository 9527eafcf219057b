/**
 * @module
 * Live figures for the console, read from the same exposition `/metrics` serves (so the console
 * and a Prometheus scrape never disagree): cumulative request, error and rate-limit counts, open
 * streams, and the latency histogram summed over models, for the model-serving surfaces. The console turns two readings
 * into rates and p50/p99 over the interval between them.
 */
import { type Bucket, histogramQuantile } from '../usage/quantile.ts'
import { SURFACE_NAMES } from './surfaces.ts'

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

export function parseExposition(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const m = LINE.exec(line)
    if (!m) continue
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!
    out.push({ name: m[1]!, labels, value: Number(m[3]) })
  }
  return out
}

const sum = (xs: Sample[]) => xs.reduce((s, x) => s + x.value, 0)

/** The model-serving surfaces: the console's own polling and admin calls are not traffic. */
const TRAFFIC = new Set<string>(SURFACE_NAMES)
const isTraffic = (s: Sample) => s.labels.surface === undefined || TRAFFIC.has(s.labels.surface)

export async function liveFigures(metrics: { render(): string | Promise<string> }, now = Date.now()) {
  const samples = parseExposition(await metrics.render())
  const named = (n: string) => samples.filter((s) => s.name === n && isTraffic(s))
  // Request counters by status; the HTTP-level family is the fallback where no other exists.
  let requests = named('switchyard_requests_total')
  if (!requests.length) requests = named('switchyard_http_requests_total')
  const byLe = new Map<number, number>()
  for (const s of named('switchyard_request_duration_seconds_bucket')) {
    const le = s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le)
    byLe.set(le, (byLe.get(le) ?? 0) + s.value)
  }
  const latency: Bucket[] = [...byLe].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le)
  const ms = (q: number) => {
    const v = histogramQuantile(q, latency)
    return v === null ? null : Math.round(v * 1000 * 10) / 10
  }
  return {
    object: 'live' as const,
    at: new Date(now).toISOString(),
    requests_total: sum(requests),
    // The gateway's and the upstreams' failures (5xx). A client's own mistakes (4xx it caused,
    // 499 when it left) are no failure of the service: counted apart, as 429s are.
    errors_total: sum(requests.filter((s) => Number(s.labels.status) >= 500)),
    client_errors_total: sum(
      requests.filter((s) => {
        const status = Number(s.labels.status)
        return status >= 400 && status < 500 && status !== 429
      }),
    ),
    // Every 429 answered: the gateway's own limits and an upstream's rate limit passed on (which
    // `switchyard_rate_limited_total`, the gateway's refusals by window, does not count).
    rate_limited_total: sum(requests.filter((s) => s.labels.status === '429')),
    open_streams: sum(named('switchyard_open_streams')),
    /** Cumulative since start: `le` in seconds (null = +Inf), count ≤ le. */
    latency_buckets: latency.map((b) => ({ le: Number.isFinite(b.le) ? b.le : null, count: b.count })),
    latency_p50_ms: ms(0.5),
    latency_p99_ms: ms(0.99),
  }
}
