/**
 * @module
 * Prometheus metrics. Each process keeps its own counters (a Map increment per request on the hot
 * path) and can hand out a plain-data snapshot; `/metrics` renders the sum of every process's
 * snapshot, so with `--workers N` whichever process answers a scrape reports the whole server and
 * no counter ever goes backwards.
 *
 * @example
 * const m = new Metrics()
 * m.requestFinished({ surface: 'chat', model: 'demo/echo', status: 200, latencyMs: 12, ... })
 * const text = renderMetrics([m.snapshot()])
 */
import type { CalendarPeriod, LimitResource } from '../limits/rows.ts'
import type { FirstPart } from '../limits/types.ts'
import { valueAt } from '../util/map.ts'

/** Seconds. Upper bounds of the latency buckets (whole requests, streams included). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
/** Seconds from the upstream call to the first streamed chunk. */
const TTFT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

interface Histogram {
  /** Per bucket, not cumulative; one more than the bounds (the +Inf bucket). */
  counts: number[]
  /**
   * Integer microseconds, so that adding processes' sums gives the same total in any order (float
   * seconds could come out an ulp lower when a different process answered, and a `_sum` that goes
   * back looks like a counter reset to Prometheus).
   */
  sumMicros: number
}

/** Plain data (structured-clone safe) so it can cross to another process. */
export interface MetricsSnapshot {
  counters: Record<string, Record<string, number>>
  gauges: Record<string, Record<string, number>>
  histograms: Record<string, Record<string, Histogram>>
}

export interface FinishedRequest {
  surface: string
  /** The prefixed model id asked for, or '' when the request never got that far. */
  model: string
  /** The model that answered when it was not the one asked for (a fallback): its tokens and cost are its own. */
  answeredBy?: string | null
  /** A continued stream's first part: its tokens and cost are its own model's, the rest `answeredBy`'s. */
  firstPart?: FirstPart | null
  status: number
  latencyMs: number
  ttftMs: number | null
  promptTokens: number | null
  completionTokens: number | null
  /** What the request cost at the model's pricing, integer micro-dollars (0 or null: free, or nothing billed). */
  costMicros?: number | null
  /** Its tokens and cost are the gateway's settled estimate: the upstream sent no usage (DESIGN §11). */
  estimated?: boolean
}

const FAMILIES = {
  switchyard_requests_total: ['counter', 'Requests answered, by surface, model and HTTP status.'],
  switchyard_request_duration_seconds: [
    'histogram',
    'Time from request to the last byte of the response (streams included).',
  ],
  switchyard_time_to_first_token_seconds: [
    'histogram',
    'Time from the upstream call to the first streamed chunk.',
  ],
  switchyard_tokens_total: [
    'counter',
    'Tokens reported by upstreams, by surface, model that answered (a fallback its own) and type.',
  ],
  switchyard_estimated_settlements_total: [
    'counter',
    "Requests whose tokens and cost are the gateway's settled estimate, not the upstream's usage (a stream the client left, an upstream that cut or sent no usage), by surface and model that answered.",
  ],
  switchyard_cost_microdollars_total: [
    'counter',
    "Cost of requests at the models' pricing, in micro-dollars (1e-6 USD; exact integers), by surface and model that answered (a fallback its own).",
  ],
  switchyard_rate_limited_total: [
    'counter',
    "Requests refused (429) for a rate limit, by the limit's resource (requests, tokens) and window (minute, day); the account's limits and a key's own.",
  ],
  switchyard_budget_refused_total: [
    'counter',
    "Requests refused (402 budget_exceeded) for a spent budget, by the budget's period (day, week, month).",
  ],
  switchyard_upstream_errors_total: [
    'counter',
    'Requests that called an upstream and failed, by the provider that failed last and the error code.',
  ],
  switchyard_circuit_refused_total: [
    'counter',
    'Requests refused (503 upstream_circuit_open) without an upstream call, every circuit that could answer being open, by the model asked for.',
  ],
  switchyard_upstream_attempts_total: [
    'counter',
    'Upstream attempts, by provider, model and outcome (ok, or the failure kind).',
  ],
  switchyard_upstream_malformed_events_total: [
    'counter',
    'Upstream stream events that were not well formed: skipped, never relayed.',
  ],
  switchyard_open_streams: ['gauge', 'Streams being relayed now.'],
  switchyard_circuit_state: [
    'gauge',
    'Circuit per provider key and model: 0 closed, 1 half-open (cooldown over: the next request probes), 2 open (skipped); the worst of every process.',
  ],
  switchyard_processes: [
    'gauge',
    "Gateway processes running (their gauges are in this scrape; exited ones' counters stay in the totals).",
  ],
} as const
type Family = keyof typeof FAMILIES

const CIRCUIT_VALUE: Record<string, number> = { closed: 0, half_open: 1, open: 2 }

/**
 * Gauges whose value is a state, not an amount: every process keeps its own circuits, and the sum
 * of two processes' states is no state (open in both read 4, half-open in both read 2, "open").
 * Across processes such a gauge shows the worst state any process has; every other gauge adds up.
 */
const STATE_GAUGES: ReadonlySet<Family> = new Set(['switchyard_circuit_state'])

const BOUNDS: Partial<Record<Family, number[]>> = {
  switchyard_request_duration_seconds: LATENCY_BUCKETS,
  switchyard_time_to_first_token_seconds: TTFT_BUCKETS,
}

const escapeValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
const labels = (pairs: Record<string, string | number>) =>
  Object.entries(pairs)
    .map(([k, v]) => `${k}="${escapeValue(String(v))}"`)
    .join(',')

/** The label sets of one surface and model, built once: the hot path only looks them up. */
interface LabelKeys {
  /** `surface,model`: the histograms. */
  both: string
  prompt: string
  completion: string
  /** `surface,model,status`, per status seen. */
  byStatus: Map<number, string>
}

export class Metrics {
  private readonly counters = new Map<Family, Map<string, number>>()
  private readonly histograms = new Map<Family, Map<string, Histogram>>()
  /** Per surface, per model. Both come from closed sets (surfaces, catalogue ids), so it stays small. */
  private readonly keys = new Map<string, Map<string, LabelKeys>>()
  /** `provider\0model\0outcome` → its label set, so an attempt costs a lookup. */
  private readonly attemptKeys = new Map<string, string>()
  /** Set at assembly: every circuit used so far and its state, for the gauge. */
  circuits: (() => Array<{ provider: string; key: number; model: string; state: string }>) | null = null
  /** Read live by the console; changed only through streamOpened/streamClosed. */
  openStreams = 0

  requestFinished(r: FinishedRequest): void {
    const k = this.labelKeys(r.surface, r.model)
    // get/set, not valueAt with a closure: the closure would be made on every request.
    let status = k.byStatus.get(r.status)
    if (status === undefined) {
      status = labels({ surface: r.surface, model: r.model, status: r.status })
      k.byStatus.set(r.status, status)
    }
    this.add('switchyard_requests_total', status, 1)
    this.observe('switchyard_request_duration_seconds', k.both, r.latencyMs / 1000)
    if (r.ttftMs !== null) this.observe('switchyard_time_to_first_token_seconds', k.both, r.ttftMs / 1000)
    // Tokens and cost belong to the model that answered (DESIGN §11 "One ledger"); the request,
    // its status and latency to the one asked for.
    const by = r.answeredBy ? this.labelKeys(r.surface, r.answeredBy) : k
    const f = r.firstPart
    if (f) this.addUsage(this.labelKeys(r.surface, f.model), f.promptTokens, f.completionTokens, f.costMicros)
    this.addUsage(
      by,
      (r.promptTokens ?? 0) - (f?.promptTokens ?? 0),
      (r.completionTokens ?? 0) - (f?.completionTokens ?? 0),
      (r.costMicros ?? 0) - (f?.costMicros ?? 0),
    )
    if (r.estimated) this.add('switchyard_estimated_settlements_total', by.both, 1)
  }

  /** Tokens and cost booked to a model's labels (nothing added for a zero). */
  private addUsage(to: LabelKeys, prompt: number, completion: number, cost: number): void {
    if (prompt) this.add('switchyard_tokens_total', to.prompt, prompt)
    if (completion) this.add('switchyard_tokens_total', to.completion, completion)
    if (cost) this.add('switchyard_cost_microdollars_total', to.both, cost)
  }

  private labelKeys(surface: string, model: string): LabelKeys {
    const byModel = valueAt(this.keys, surface, newMap)
    let keys = byModel.get(model)
    if (keys === undefined) {
      keys = {
        both: labels({ surface, model }),
        prompt: labels({ surface, model, type: 'prompt' }),
        completion: labels({ surface, model, type: 'completion' }),
        byStatus: new Map(),
      }
      byModel.set(model, keys)
    }
    return keys
  }

  /** A 429 of a rate limit: `resource` is the limit's (`requests`: rpm / rpd; `tokens`: tpm / tpd). */
  limitRejected(resource: Exclude<LimitResource, 'microdollars'>, window: string): void {
    this.add('switchyard_rate_limited_total', labels({ resource, window }), 1)
  }

  /** A 402 of a budget (not a rate limit: it waits for the period's end, not a window's room). */
  budgetRefused(period: CalendarPeriod): void {
    this.add('switchyard_budget_refused_total', labels({ period }), 1)
  }

  upstreamError(provider: string, code: string): void {
    this.add('switchyard_upstream_errors_total', labels({ provider, code }), 1)
  }

  /** A 503 `upstream_circuit_open`: the gateway's refusal, no upstream was called. */
  circuitRefused(model: string): void {
    this.add('switchyard_circuit_refused_total', labels({ model }), 1)
  }

  upstreamAttempt(provider: string, model: string, outcome: string): void {
    const id = `${provider}\u0000${model}\u0000${outcome}`
    let key = this.attemptKeys.get(id)
    if (key === undefined) {
      key = labels({ provider, model, outcome })
      this.attemptKeys.set(id, key)
    }
    this.add('switchyard_upstream_attempts_total', key, 1)
  }

  malformedEvents(provider: string, n: number): void {
    this.add('switchyard_upstream_malformed_events_total', labels({ provider }), n)
  }

  streamOpened(): void {
    this.openStreams++
  }

  streamClosed(): void {
    this.openStreams--
  }

  snapshot(): MetricsSnapshot {
    const counters: MetricsSnapshot['counters'] = {}
    for (const [f, m] of this.counters) counters[f] = Object.fromEntries(m)
    const histograms: MetricsSnapshot['histograms'] = {}
    for (const [f, m] of this.histograms) {
      histograms[f] = Object.fromEntries(
        [...m].map(([k, h]) => [k, { counts: [...h.counts], sumMicros: h.sumMicros }]),
      )
    }
    return {
      counters,
      histograms,
      gauges: {
        switchyard_open_streams: { '': this.openStreams },
        switchyard_processes: { '': 1 },
        switchyard_circuit_state: this.circuitGauge(),
      },
    }
  }

  private circuitGauge(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const c of this.circuits?.() ?? []) {
      out[labels({ provider: c.provider, key: `#${c.key}`, model: c.model })] = CIRCUIT_VALUE[c.state] ?? 0
    }
    return out
  }

  /**
   * With `--workers`, set by `serve`: the current snapshots of the other processes, so any process
   * can answer a scrape for all of them.
   */
  peers: (() => Promise<MetricsSnapshot[]>) | null = null

  /** The text exposition of every process of this server. */
  async render(): Promise<string> {
    return renderMetrics([this.snapshot(), ...((await this.peers?.()) ?? [])])
  }

  private add(family: Family, key: string, n: number): void {
    const m = valueAt(this.counters, family, newMap)
    m.set(key, (m.get(key) ?? 0) + n)
  }

  private observe(family: Family, key: string, value: number): void {
    const bounds = BOUNDS[family]!
    const byKey = valueAt(this.histograms, family, newMap)
    let h = byKey.get(key)
    if (h === undefined) {
      h = { counts: new Array(bounds.length + 1).fill(0), sumMicros: 0 }
      byKey.set(key, h)
    }
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    h.counts[i]!++
    h.sumMicros += Math.round(value * 1e6)
  }
}

/** A snapshot with nothing in it: the start of `foldCounters`. */
export function emptySnapshot(): MetricsSnapshot {
  return { counters: {}, gauges: {}, histograms: {} }
}

/**
 * Adds `from`'s counters and histograms into `into`, leaving its gauges out: what a process that
 * has exited leaves behind. Its open streams, circuits and its count in `switchyard_processes`
 * ended with it; its counters must not, or a scrape after its death would see them go backwards.
 */
export function foldCounters(into: MetricsSnapshot, from: MetricsSnapshot): void {
  for (const [family, series] of Object.entries(from.counters)) {
    const to = into.counters[family] ?? {}
    into.counters[family] = to
    for (const [k, v] of Object.entries(series)) to[k] = (to[k] ?? 0) + v
  }
  for (const [family, series] of Object.entries(from.histograms)) {
    const to = into.histograms[family] ?? {}
    into.histograms[family] = to
    for (const [k, h] of Object.entries(series)) addHistogram(to, k, h)
  }
}

function addHistogram(into: Record<string, Histogram>, key: string, h: Histogram): void {
  const have = into[key]
  if (!have) {
    into[key] = { counts: [...h.counts], sumMicros: h.sumMicros }
    return
  }
  h.counts.forEach((c, i) => {
    have.counts[i]! += c
  })
  have.sumMicros += h.sumMicros
}

/** Sums the snapshots of every process (a state gauge: the worst state) and renders Prometheus text format 0.0.4. */
export function renderMetrics(snapshots: MetricsSnapshot[]): string {
  const lines: string[] = []
  for (const [family, [type, help]] of Object.entries(FAMILIES) as Array<
    [Family, readonly [string, string]]
  >) {
    lines.push(`# HELP ${family} ${help}`, `# TYPE ${family} ${type}`)
    if (type === 'histogram') renderHistogram(lines, family, snapshots)
    else {
      const sums = new Map<string, number>()
      const merge = STATE_GAUGES.has(family) ? Math.max : (a: number, b: number) => a + b
      for (const s of snapshots) {
        const m = (type === 'gauge' ? s.gauges : s.counters)[family] ?? {}
        for (const [k, v] of Object.entries(m)) {
          const have = sums.get(k)
          sums.set(k, have === undefined ? v : merge(have, v))
        }
      }
      for (const [k, v] of sums) lines.push(k ? `${family}{${k}} ${v}` : `${family} ${v}`)
    }
  }
  return `${lines.join('\n')}\n`
}

function renderHistogram(lines: string[], family: Family, snapshots: MetricsSnapshot[]): void {
  const bounds = BOUNDS[family]!
  const merged: Record<string, Histogram> = {}
  for (const s of snapshots) {
    for (const [k, h] of Object.entries(s.histograms[family] ?? {})) addHistogram(merged, k, h)
  }
  for (const [k, h] of Object.entries(merged)) {
    let cumulative = 0
    bounds.forEach((b, i) => {
      cumulative += h.counts[i]!
      lines.push(`${family}_bucket{${k},le="${b}"} ${cumulative}`)
    })
    cumulative += h.counts[bounds.length]!
    lines.push(`${family}_bucket{${k},le="+Inf"} ${cumulative}`)
    lines.push(`${family}_sum{${k}} ${h.sumMicros / 1e6}`)
    lines.push(`${family}_count{${k}} ${cumulative}`)
  }
}

/** An empty map, for `valueAt` (made once, not a closure per call). */
const newMap = <K, V>(): Map<K, V> => new Map<K, V>()
