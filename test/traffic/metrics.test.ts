import { expect, test } from 'bun:test'
import { getMetricsFromIterator, type PromHistogramData } from 'prom2javascript'
import { emptySnapshot, foldCounters, Metrics, renderMetrics } from '../../src/traffic/metrics.ts'

const parse = async (text: string) => getMetricsFromIterator(text.split('\n')[Symbol.iterator]())

test('snapshots of several processes sum: counters, cumulative histogram buckets, gauges', async () => {
  const a = new Metrics()
  const b = new Metrics()
  const req = {
    surface: 'chat',
    model: 'demo/echo',
    status: 200,
    ttftMs: null,
    promptTokens: 3,
    completionTokens: 5,
  }
  a.requestFinished({ ...req, latencyMs: 4 })
  a.requestFinished({ ...req, latencyMs: 700, ttftMs: 30 })
  b.requestFinished({ ...req, latencyMs: 20_000, status: 502, promptTokens: null, completionTokens: null })
  b.limitRejected('tokens', 'minute')
  b.budgetRefused('month')
  b.upstreamError('openai', 'upstream_timeout')
  b.streamOpened()
  const m = await parse(renderMetrics([a.snapshot(), b.snapshot()]))
  expect(m.switchyard_requests_total!.data).toEqual([
    { labels: { surface: 'chat', model: 'demo/echo', status: '200' }, value: 2 },
    { labels: { surface: 'chat', model: 'demo/echo', status: '502' }, value: 1 },
  ])
  const h = (m.switchyard_request_duration_seconds!.data as PromHistogramData[])[0]!
  expect(h.count).toBe(3)
  expect(h.buckets['0.005']).toBe(1)
  expect(h.buckets['1']).toBe(2)
  expect(h.buckets['30']).toBe(3)
  expect(h.buckets['+Inf']).toBe(3)
  expect(h.sum).toBeCloseTo(20.704, 6)
  expect((m.switchyard_time_to_first_token_seconds!.data as PromHistogramData[])[0]!.count).toBe(1)
  expect(m.switchyard_tokens_total!.data.map((d) => (d as { value: number }).value)).toEqual([6, 10])
  expect(m.switchyard_rate_limited_total!.data).toEqual([
    { labels: { resource: 'tokens', window: 'minute' }, value: 1 },
  ])
  expect(m.switchyard_budget_refused_total!.data).toEqual([{ labels: { period: 'month' }, value: 1 }])
  expect(m.switchyard_upstream_errors_total!.data).toEqual([
    { labels: { provider: 'openai', code: 'upstream_timeout' }, value: 1 },
  ])
  expect(m.switchyard_open_streams!.data).toEqual([{ labels: {}, value: 1 }])
  expect(m.switchyard_processes!.data).toEqual([{ labels: {}, value: 2 }])
})

test('label values are escaped', async () => {
  const a = new Metrics()
  a.upstreamError('we"ird\\prefix', 'x\ny')
  const text = renderMetrics([a.snapshot()])
  expect(text).toContain('provider="we\\"ird\\\\prefix",code="x\\ny"')
})

test('cost counters by model sum exactly across processes, in integer micro-dollars', async () => {
  const a = new Metrics()
  const b = new Metrics()
  const req = {
    surface: 'chat',
    status: 200,
    latencyMs: 1,
    ttftMs: null,
    promptTokens: 10,
    completionTokens: 5,
  }
  a.requestFinished({ ...req, model: 'openai/gpt-4o-mini', costMicros: 2500 })
  b.requestFinished({ ...req, model: 'openai/gpt-4o-mini', costMicros: 1 })
  b.requestFinished({ ...req, surface: 'messages', model: 'openai/gpt-4o-mini', costMicros: 7 })
  // A free model (cost 0) is not a series of its own: there is nothing to add up.
  a.requestFinished({ ...req, model: 'demo/echo', costMicros: 0 })
  const text = renderMetrics([a.snapshot(), b.snapshot()])
  expect(text).toContain('# TYPE switchyard_cost_microdollars_total counter')
  const m = await parse(text)
  expect(m.switchyard_cost_microdollars_total!.data).toEqual([
    { labels: { surface: 'chat', model: 'openai/gpt-4o-mini' }, value: 2501 },
    { labels: { surface: 'messages', model: 'openai/gpt-4o-mini' }, value: 7 },
  ])
})

test("an exited process's figures folded away: its counters and histograms stay, its gauges go", async () => {
  const live = new Metrics()
  const gone = new Metrics()
  const req = { surface: 'chat', model: 'demo/echo', status: 200, latencyMs: 30, ttftMs: 5 }
  live.requestFinished({ ...req, promptTokens: 1, completionTokens: 1 })
  gone.requestFinished({ ...req, promptTokens: 2, completionTokens: 3 })
  gone.requestFinished({ ...req, status: 429, promptTokens: null, completionTokens: null })
  gone.streamOpened()
  gone.streamOpened()
  const departed = emptySnapshot()
  foldCounters(departed, gone.snapshot())
  foldCounters(departed, gone.snapshot()) // two exited processes with the same figures
  const before = await parse(renderMetrics([live.snapshot(), gone.snapshot()]))
  const after = await parse(renderMetrics([live.snapshot(), departed]))
  expect(after.switchyard_open_streams!.data).toEqual([{ labels: {}, value: 0 }])
  expect(after.switchyard_processes!.data).toEqual([{ labels: {}, value: 1 }])
  expect(after.switchyard_requests_total!.data).toEqual([
    { labels: { surface: 'chat', model: 'demo/echo', status: '200' }, value: 3 },
    { labels: { surface: 'chat', model: 'demo/echo', status: '429' }, value: 2 },
  ])
  const count = (m: typeof before) =>
    (m.switchyard_request_duration_seconds!.data as PromHistogramData[]).reduce((n, h) => n + h.count, 0)
  expect(count(before)).toBe(3)
  expect(count(after)).toBe(5)
  expect(before.switchyard_open_streams!.data).toEqual([{ labels: {}, value: 2 }])
})

test('circuit state across processes is the worst state any has it in, never a sum of states', async () => {
  const withCircuits = (...states: string[]) => {
    const m = new Metrics()
    m.circuits = () => states.map((state, i) => ({ provider: 'p', key: 0, model: `m${i}`, state }))
    return m.snapshot()
  }
  // m0: open in both; m1: half-open in both; m2: closed in one, open in the other.
  const text = renderMetrics([
    withCircuits('open', 'half_open', 'closed'),
    withCircuits('open', 'half_open', 'open'),
  ])
  const m = await parse(text)
  expect(m.switchyard_circuit_state!.data).toEqual([
    { labels: { provider: 'p', key: '#0', model: 'm0' }, value: 2 },
    { labels: { provider: 'p', key: '#0', model: 'm1' }, value: 1 },
    { labels: { provider: 'p', key: '#0', model: 'm2' }, value: 2 },
  ])
  // The other gauges still add up over processes.
  expect(m.switchyard_processes!.data).toEqual([{ labels: {}, value: 2 }])
})
