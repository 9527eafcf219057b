/**
 * `switchyard_circuit_state` under `serve --workers 2`. Each process keeps its own circuits and a
 * scrape merges every process's snapshot; the state gauge (0 closed, 1 half-open, 2 open) was
 * summed like the open-streams gauge, so a circuit open in both processes read 4 — no state at
 * all — and one half-open in both read 2, "open". A scrape now shows the worst state any process
 * has the circuit in. The refusals while it is open are counted where an operator looks for them:
 * by status, as circuit refusals of the model (`switchyard_circuit_refused_total`: no upstream was
 * called, so no upstream error of the provider; metrics-circuit-refusals.test.ts), and as no attempt.
 */
import { afterAll, expect, test } from 'bun:test'
import { getMetricsFromIterator, type PromMetric } from 'prom2javascript'
import { type MockUpstream, startMockUpstream } from '../../scripts/mock-upstream.ts'
import { cli } from '../support/cli.ts'
import { PLANS, tempDir, testConfigDoc } from '../support/config-doc.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../support/process.ts'

const procs: ServeProcess[] = []
const mocks: MockUpstream[] = []
afterAll(async () => {
  for (const p of procs) p.proc.kill('SIGKILL')
  for (const m of mocks) await m.stop()
})

const samples = (f: PromMetric | undefined) =>
  (f?.data ?? []) as Array<{ labels: Record<string, string>; value: number }>
const sum = (f: PromMetric | undefined, where: Record<string, string>) =>
  samples(f)
    .filter((m) => Object.entries(where).every(([k, v]) => m.labels[k] === v))
    .reduce((n, m) => n + m.value, 0)

async function scrape(url: string): Promise<Map<string, PromMetric>> {
  const text = await (await fetch(`${url}/metrics`, { headers: { connection: 'close' } })).text()
  return new Map(Object.entries(await getMetricsFromIterator(text.split('\n')[Symbol.iterator]())))
}

test('a circuit open in both workers reads 2 (open), whichever process answers; its 503s are counted once each', async () => {
  const mock = await startMockUpstream({ chunks: 2 })
  mocks.push(mock)
  const doc = testConfigDoc({
    providers: [
      {
        prefix: 'down',
        kind: 'openai',
        base_url: mock.url,
        api_key: 'k',
        // One failed attempt opens the target's circuit, for longer than the test.
        retry: { attempts: 0 },
        circuit: { failures: 1, cooldown_s: 600 },
        models: [
          { name: 'fault-500', context_window: 8192, max_output_tokens: 256, features: ['streaming'] },
        ],
      },
    ],
    plans: PLANS,
    default_plan: 'unlimited',
  })
  const base = ['--config', writeConfig(tempDir(), doc)]
  expect((await cli(['accounts', 'create', 'c', ...base])).code).toBe(0)
  const key = (await cli(['keys', 'create', 'c', '--json', ...base])).json().key as string
  const serve = await spawnServe(['--workers', '2', '--port', '0', ...base])
  procs.push(serve)

  // A new connection each time: the kernel spreads them, and each process opens its own circuit.
  const sent = { failed: 0, circuitOpen: 0, attempts: 0 }
  for (let i = 0; i < 30; i++) {
    const res = await fetch(`${serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ model: 'down/fault-500', messages: [{ role: 'user', content: `hi ${i}` }] }),
    })
    const body = (await res.json()) as { error: { code: string } }
    expect(res.status).toBeGreaterThanOrEqual(500)
    sent.attempts += Number(res.headers.get('x-switchyard-attempts'))
    if (body.error.code === 'upstream_circuit_open') sent.circuitOpen++
    else sent.failed++
  }
  // One failure per process opened its circuit; every later request was refused without a call.
  expect(sent.failed).toBe(2)
  expect(sent.circuitOpen).toBe(28)
  expect(sent.attempts).toBe(2)

  // A request is counted once its response has gone out, which its client may see first: scrape
  // (briefly) until the last one is in, then every scrape must agree.
  for (let tries = 0; tries < 40; tries++) {
    const m = await scrape(serve.url)
    if (sum(m.get('switchyard_requests_total'), { model: 'down/fault-500' }) === 30) break
    await Bun.sleep(25)
  }
  for (let s = 0; s < 8; s++) {
    const m = await scrape(serve.url)
    expect(sum(m.get('switchyard_processes'), {})).toBe(2)
    expect(samples(m.get('switchyard_circuit_state'))).toEqual([
      { labels: { provider: 'down', key: '#0', model: 'fault-500' }, value: 2 },
    ])
    const requests = m.get('switchyard_requests_total')
    expect(sum(requests, { surface: 'chat', model: 'down/fault-500' })).toBe(30)
    expect(sum(requests, { surface: 'chat', model: 'down/fault-500', status: '503' })).toBe(28)
    const errors = m.get('switchyard_upstream_errors_total')
    expect(sum(errors, { code: 'upstream_circuit_open' })).toBe(0)
    expect(sum(errors, { provider: 'down' })).toBe(2)
    expect(samples(m.get('switchyard_circuit_refused_total'))).toEqual([
      { labels: { model: 'down/fault-500' }, value: 28 },
    ])
    // Refused while open: no attempt; the two real ones are transient failures.
    expect(samples(m.get('switchyard_upstream_attempts_total'))).toEqual([
      { labels: { provider: 'down', model: 'fault-500', outcome: 'transient' }, value: 2 },
    ])
  }
}, 60_000)
