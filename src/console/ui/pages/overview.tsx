/**
 * @module
 * Traffic: the last hours from the store (hourly rollups: each hour's average rate, error rate
 * and mean latency) on arrival, then live readings on top — the admin API's cumulative figures
 * (the same as `/metrics`) read every 2 s; rates and p50/p99 latency over each interval between
 * two readings. The readings outlive the page (kept while the console is open), so a visit
 * elsewhere does not reset them. The time axis spans the window, whatever the data holds.
 */
import { useEffect, useState } from 'preact/hooks'
import { type Bucket, histogramDelta, histogramQuantile } from '../../../usage/quantile.ts'
import { api, qs } from '../api.ts'
import { Chart } from '../chart.tsx'
import { num } from '../format.ts'
import { ErrorNotice, Page } from '../parts.tsx'
import { refusedTotal } from './overview-health.tsx'
import { SpendTiles } from './overview-money.tsx'
import { OverviewPanels, useOverviewData } from './overview-panels.tsx'

const POLL_MS = 2000
/** Live readings kept: an hour of them. */
const KEEP = 1800
const HOUR_S = 3600
/** The charts' windows: the last hours (the store's hours and the live readings), or the live readings up close. */
const WINDOWS = [
  [6 * HOUR_S, 'last 6 hours'],
  [HOUR_S, 'last hour'],
  [600, 'last 10 minutes'],
] as const

interface Reading {
  t: number
  requests: number
  errors: number
  limited: number
  open: number
  buckets: Bucket[]
}

interface Point {
  t: number
  rps: number
  /** Live points: the 5xx share, %. */
  errorRate: number | null
  /** Hourly points: the rollups' errors (any 4xx or 5xx but 429, client's included), %. */
  hourErrors?: number | null
  limitedRps: number
  p50: number | null
  p99: number | null
  open: number | null
  /** Hourly points from the store: the hour's mean latency (live points have p50/p99). */
  mean?: number | null
}

/** The traffic charts: each line a label and the figure it draws of a point (hourly, then live). */
const LIVE_CHARTS: Array<{ id: string; title: string; lines: Array<[string, (p: Point) => number | null]> }> =
  [
    {
      id: 'live-traffic',
      title: 'Requests and 429s per second',
      lines: [
        ['requests/s', (p) => p.rps],
        ['429/s', (p) => p.limitedRps],
      ],
    },
    {
      id: 'live-errors',
      title: 'Error rate (%)',
      lines: [
        ['5xx %', (p) => p.errorRate],
        ['hourly, any 4xx/5xx %', (p) => p.hourErrors ?? null],
      ],
    },
    {
      id: 'live-latency',
      title: 'Latency (ms)',
      lines: [
        ['p50', (p) => p.p50],
        ['p99', (p) => p.p99],
        ['hourly mean', (p) => p.mean ?? null],
      ],
    },
    { id: 'live-streams', title: 'Open streams', lines: [['open streams', (p) => p.open]] },
  ]

/** Live readings, kept across visits to the page while the console is open. */
const live: { prev: Reading | null; points: Point[] } = { prev: null, points: [] }

/** An hour from the usage rollups as a point at its start (the current hour: so far). */
function hourPoint(p: any, now: number): Point {
  const t = Date.parse(p.t) / 1000
  const secs = Math.max(1, Math.min(HOUR_S, now - t))
  return {
    t,
    rps: Math.round((p.requests / secs) * 1000) / 1000,
    errorRate: null,
    hourErrors: p.requests ? Math.round((p.errors / p.requests) * 1000) / 10 : 0,
    limitedRps: Math.round((p.rate_limited / secs) * 1000) / 1000,
    p50: null,
    p99: null,
    open: null,
    mean: p.avg_latency_ms,
  }
}

const toReading = (l: any): Reading => ({
  t: Date.parse(l.at) / 1000,
  requests: l.requests_total,
  errors: l.errors_total,
  limited: l.rate_limited_total,
  open: l.open_streams,
  buckets: l.latency_buckets.map((b: any) => ({ le: b.le ?? Number.POSITIVE_INFINITY, count: b.count })),
})

function between(a: Reading, b: Reading): Point {
  const dt = Math.max(0.001, b.t - a.t)
  const req = Math.max(0, b.requests - a.requests)
  const d = histogramDelta(b.buckets, a.buckets)
  const q = (x: number) => {
    const v = histogramQuantile(x, d)
    return v === null ? null : Math.round(v * 10000) / 10
  }
  return {
    t: b.t,
    rps: Math.round((req / dt) * 100) / 100,
    errorRate: req ? Math.round((Math.max(0, b.errors - a.errors) / req) * 1000) / 10 : 0,
    limitedRps: Math.round((Math.max(0, b.limited - a.limited) / dt) * 100) / 100,
    p50: q(0.5),
    p99: q(0.99),
    open: b.open,
  }
}

export function Overview() {
  const [points, setPoints] = useState<Point[]>(live.points)
  const [windowS, setWindowS] = useState<number>(WINDOWS[0][0])
  const [last, setLast] = useState<any>(null)
  const [today, setToday] = useState<any>(null)
  const [error, setError] = useState('')
  const overview = useOverviewData()
  useEffect(() => {
    let stopped = false
    const tick = async () => {
      try {
        const figures = await api('GET', '/admin/v1/live')
        const r = toReading(figures)
        // A reading from before a restart (counters went down) starts a new series.
        if (live.prev && r.requests >= live.prev.requests) {
          live.points = [...live.points.slice(-KEEP + 1), between(live.prev, r)]
          setPoints(live.points)
        }
        live.prev = r
        setLast(figures)
        setError('')
      } catch (e) {
        setError(e instanceof Error ? e.message : String(e))
      }
      if (!stopped) timer = setTimeout(tick, POLL_MS)
    }
    let timer = setTimeout(tick, 0)
    // The last 24 h totals come from the rollups; every 30 s is fresh enough.
    const loadToday = () =>
      api('GET', `/admin/v1/usage/series${qs({ bucket: 'hour', group_by: 'none' })}`)
        .then(setToday)
        .catch(() => {})
    loadToday()
    const todayTimer = setInterval(loadToday, 30_000)
    return () => {
      stopped = true
      clearTimeout(timer)
      clearInterval(todayTimer)
    }
  }, [])
  const now = points.length ? points[points.length - 1]!.t : Date.now() / 1000
  const range: [number, number] = [now - windowS, now]
  // The stored hours before the first live reading, then the live readings.
  const firstLive = points[0]?.t ?? Number.POSITIVE_INFINITY
  const hours = (today?.series?.[0]?.points ?? [])
    .map((p: any) => hourPoint(p, now))
    .filter((p: Point) => p.t >= range[0] - HOUR_S && p.t < firstLive)
  const all: Point[] = [...hours, ...points]
  const x = all.map((p) => p.t)
  const cur = points[points.length - 1]
  const day = (today?.series?.[0]?.points ?? []).reduce(
    (a: any, p: any) => ({
      requests: a.requests + p.requests,
      tokens: a.tokens + p.total_tokens,
      errors: a.errors + p.errors,
      limited: a.limited + p.rate_limited,
    }),
    { requests: 0, tokens: 0, errors: 0, limited: 0 },
  )
  return (
    <Page id="overview" title="Overview">
      <ErrorNotice error={error} />
      <div class="tiles" aria-live="off">
        <div class="tile">
          <span class="v">{cur ? cur.rps : '…'}</span>
          <span class="k">requests / s</span>
        </div>
        <div class="tile">
          <span class="v">{cur ? `${cur.errorRate} %` : '…'}</span>
          <span class="k">error rate (5xx; client 4xx apart)</span>
        </div>
        <div class="tile">
          <span class="v">{cur?.p50 != null ? `${cur.p50} ms` : '—'}</span>
          <span class="k">latency p50</span>
        </div>
        <div class="tile">
          <span class="v">{cur?.p99 != null ? `${cur.p99} ms` : '—'}</span>
          <span class="k">latency p99</span>
        </div>
        <div class="tile">
          <span class="v">{last ? num(last.open_streams) : '…'}</span>
          <span class="k">open streams</span>
        </div>
        <div class="tile">
          <span class="v">{num(day.requests)}</span>
          <span class="k">requests, last 24 h</span>
        </div>
        <div class="tile">
          <span class="v">{num(day.tokens)}</span>
          <span class="k">tokens, last 24 h</span>
        </div>
        <SpendTiles spend={overview.spend} />
        <div class="tile" data-testid="refused-24h">
          <span class="v">{overview.refusals ? num(refusedTotal(overview.refusals)) : '…'}</span>
          <span class="k">refused, last 24 h (every code)</span>
        </div>
      </div>
      <OverviewPanels data={overview} />
      <form class="bar" aria-label="Traffic window" onSubmit={(e) => e.preventDefault()}>
        <label>
          Traffic
          <select
            name="window"
            value={String(windowS)}
            onChange={(e) => setWindowS(Number((e.target as HTMLSelectElement).value))}
          >
            {WINDOWS.map(([s, label]) => (
              <option value={String(s)}>{label}</option>
            ))}
          </select>
        </label>
      </form>
      <p class="muted">
        Hourly averages from the store, then live figures of this process read every {POLL_MS / 1000} s. Times
        are UTC.
      </p>
      <div class="charts">
        {LIVE_CHARTS.map((c) => (
          <Chart
            id={c.id}
            title={c.title}
            x={x}
            range={range}
            lines={c.lines.map(([label, of]) => ({ label, values: all.map(of) }))}
          />
        ))}
      </div>
    </Page>
  )
}
