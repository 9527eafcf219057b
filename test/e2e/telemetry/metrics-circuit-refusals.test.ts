/**
 * A request refused because every circuit that could answer it is open (503
 * `upstream_circuit_open`) made no upstream call, yet `/metrics` counted it in
 * `switchyard_upstream_errors_total` under the requested model's provider — also when that
 * provider's own call had never been the last to fail, and whatever the fallbacks' circuits were.
 * An operator reading upstream errors by provider saw failures of a provider the gateway had not
 * called.
 *
 * Decided: it is the gateway's refusal, not an upstream's error. It is counted in
 * `switchyard_circuit_refused_total{model}` (the model asked for), beside the 503 in the requests
 * by status; the open circuits themselves are `switchyard_circuit_state`. Upstream errors by
 * provider count requests that called an upstream and failed, under the provider that failed last.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { getMetricsFromIterator, type PromMetric } from 'prom2javascript'
import { type ResilienceBed, startResilienceBed } from '../../support/resilience-bed.ts'

const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 4096,
  features: ['streaming', 'system_messages'],
  ...extra,
})
/** One failed attempt opens a circuit, for longer than the test. */
const BRITTLE = { retry: { attempts: 0 }, circuit: { failures: 1, cooldown_s: 600 } }

let bed: ResilienceBed
beforeAll(async () => {
  bed = await startResilienceBed({
    providers: (url) => [
      {
        prefix: 'one',
        kind: 'openai',
        base_url: `${url}/v1`,
        api_key: 'sk-one-0001',
        ...BRITTLE,
        models: [model('m1', { fallbacks: ['two/m2'] })],
      },
      {
        prefix: 'two',
        kind: 'openai',
        base_url: `${url}/v1`,
        api_key: 'sk-two-0002',
        ...BRITTLE,
        models: [model('m2')],
      },
    ],
  })
})
afterAll(() => bed.stop())

const samples = (f: PromMetric | undefined) =>
  (f?.data ?? []) as Array<{ labels: Record<string, string>; value: number }>

async function scrape(): Promise<Map<string, PromMetric>> {
  const text = await (await fetch(`${bed.gw.url}/metrics`)).text()
  return new Map(Object.entries(await getMetricsFromIterator(text.split('\n')[Symbol.iterator]())))
}

test('a 503 upstream_circuit_open is no upstream error of any provider: counted as a circuit refusal of the model asked for', async () => {
  bed.up.script({ model: 'm1' }, 'unavailable')
  bed.up.script({ model: 'm2' }, 'unavailable')
  // The first calls both and fails: both circuits open. The next three call nothing.
  const statuses: Array<[number, string, string | null]> = []
  for (let i = 0; i < 4; i++) {
    const res = await bed.post('chat', 'one/m1')
    const body = (await res.json()) as { error: { code: string } }
    statuses.push([res.status, body.error.code, res.headers.get('x-switchyard-attempts')])
  }
  expect(statuses[0]![2]).toBe('2')
  expect(statuses.slice(1)).toEqual([
    [503, 'upstream_circuit_open', '0'],
    [503, 'upstream_circuit_open', '0'],
    [503, 'upstream_circuit_open', '0'],
  ])
  expect(bed.up.attempts({})).toHaveLength(2)

  let m = await scrape()
  for (let i = 0; i < 40; i++) {
    const n = samples(m.get('switchyard_requests_total')).reduce((s, x) => s + x.value, 0)
    if (n >= 4) break
    await Bun.sleep(25)
    m = await scrape()
  }
  // The one request that called upstreams: one error, under the provider that failed last.
  const errors = samples(m.get('switchyard_upstream_errors_total'))
  expect(errors.filter((e) => e.labels.code === 'upstream_circuit_open')).toEqual([])
  expect(errors.reduce((s, e) => s + e.value, 0)).toBe(1)
  expect(errors[0]!.labels.provider).toBe('two')
  expect(samples(m.get('switchyard_circuit_refused_total'))).toEqual([
    { labels: { model: 'one/m1' }, value: 3 },
  ])
  const open = samples(m.get('switchyard_circuit_state')).filter((s) => s.value === 2)
  expect(open.map((s) => s.labels.provider).sort()).toEqual(['one', 'two'])
  const status503 = samples(m.get('switchyard_requests_total')).filter((s) => s.labels.status === '503')
  expect(status503.reduce((s, x) => s + x.value, 0)).toBe(4)
})

test('the log says so too: a circuit refusal is no "upstream failure" line, but one of its own at info', async () => {
  // The requests of the test above: one called both upstreams and failed, three were refused.
  const lines = bed.gw.logs.map((l) => JSON.parse(l))
  const failures = lines.filter((l) => l.msg === 'upstream failure')
  expect(failures.map((l) => [l.level, l.code])).toEqual([['warn', 'upstream_overloaded']])
  const refusals = lines.filter((l) => l.msg === 'circuit open: refused, no upstream called')
  expect(refusals.map((l) => [l.level, l.code, l.model, l.status])).toEqual(
    Array(3).fill(['info', 'upstream_circuit_open', 'one/m1', 503]),
  )
  for (const l of refusals) expect(l.request_id).toMatch(/^req_/)
})
