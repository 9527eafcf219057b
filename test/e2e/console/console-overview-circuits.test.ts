/**
 * The console's provider health agrees with `/metrics` on every backend: a 503
 * `upstream_circuit_open` that called no upstream (every circuit open) is no provider's upstream
 * error — it is shown apart as `circuit_refused` under the requested model's provider — and a
 * request that called upstreams and failed is charged to the provider that failed last (the
 * request log's `answered_by`), not to the requested model's.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { backends } from '../../support/backends.ts'
import { ADMIN_TOKEN, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

let gw: TestGateway
let upstream: ReturnType<typeof Bun.serve>
beforeAll(() => {
  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => Response.json({ error: { message: 'overloaded', type: 'server_error' } }, { status: 503 }),
  })
})
afterAll(() => upstream.stop(true))
afterEach(async () => {
  await gw?.stop()
})

const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 8192,
  max_output_tokens: 1024,
  features: ['streaming'],
  ...extra,
})
/** One failed attempt opens a circuit, for longer than the test. */
const BRITTLE = { retry: { attempts: 0 }, circuit: { failures: 1, cooldown_s: 600 } }
const doc = () =>
  testConfigDoc({
    usage: { flush_ms: 10 },
    providers: [
      {
        prefix: 'one',
        kind: 'openai',
        base_url: `http://127.0.0.1:${upstream.port}/v1`,
        api_key: 'sk-one-0123456789',
        ...BRITTLE,
        models: [model('m1', { fallbacks: ['two/m2'] })],
      },
      {
        prefix: 'two',
        kind: 'openai',
        base_url: `http://127.0.0.1:${upstream.port}/v1`,
        api_key: 'sk-two-0123456789',
        ...BRITTLE,
        models: [model('m2')],
      },
    ],
    plans: { ...PLANS, all: { rpm: null, rpd: null, models: ['*'] } },
  })

async function chat(key: string, m: string) {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: m, messages: [{ role: 'user', content: 'hi' }] }),
  })
  const body = (await r.json()) as { error?: { code: string } }
  return [r.status, body.error?.code ?? null, r.headers.get('x-switchyard-attempts')]
}

async function settle(n: number) {
  for (let i = 0; i < 100; i++) {
    await gw.deps.recorder.flush()
    const page = await gw.deps.store.requestLog({ limit: 200 })
    if (page.rows.length >= n && page.rows.every((r) => r.status !== null)) return
    await Bun.sleep(20)
  }
  throw new Error('outcomes not stored')
}

for (const backend of backends('console-overview-circuits.test.ts').filter(
  (b) => b.name !== 'postgres+redis',
)) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test('provider health: a circuit refusal is no upstream error; an error is charged to the provider that failed last', async () => {
      gw = await startGateway({ doc: doc(), backend: await backend.fresh() })
      const { key } = await gw.key('co', 'all')
      // The first calls one/m1 then its fallback two/m2: both fail, both circuits open. The next
      // three call nothing.
      const outcomes = [await chat(key, 'one/m1'), await chat(key, 'one/m1'), await chat(key, 'one/m1')]
      outcomes.push(await chat(key, 'one/m1'))
      expect(outcomes).toEqual([
        [503, 'upstream_overloaded', '2'],
        [503, 'upstream_circuit_open', '0'],
        [503, 'upstream_circuit_open', '0'],
        [503, 'upstream_circuit_open', '0'],
      ])
      await settle(4)

      const r = await fetch(`${gw.url}/admin/v1/overview/providers`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
      expect(r.status).toBe(200)
      const health = (await r.json()) as any
      expect(health.scanned).toBe(4)
      const by = Object.fromEntries(health.data.map((p: any) => [p.provider, p]))
      // Charged to the provider that failed last (two), as /metrics does.
      expect([by.two.requests, by.two.upstream_errors, by.two.error_rate, by.two.circuit_refused]).toEqual([
        1, 1, 1, 0,
      ])
      expect(by.two.errors_by_code.map((c: any) => [c.code, c.status, c.count])).toEqual([
        ['upstream_overloaded', 503, 1],
      ])
      // No call made to one: no request, no upstream error; the three refusals shown apart.
      expect([by.one.requests, by.one.upstream_errors, by.one.errors_by_code, by.one.last_error_at]).toEqual([
        0,
        0,
        [],
        null,
      ])
      expect(by.one.circuit_refused).toBe(3)
      expect(health.data[0].provider).toBe('two') // the most upstream errors first
    })
  })
}
