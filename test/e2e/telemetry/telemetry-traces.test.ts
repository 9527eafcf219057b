/**
 * OpenTelemetry traces (DESIGN §15) through the real gateway, a fault upstream and a local OTLP/HTTP
 * collector, over both protocols (JSON, and protobuf decoded here by a small reader): a request that
 * carries a client's `traceparent` and is retried once gives one SERVER span continuing the client's
 * trace and one CLIENT span per attempt, with the GenAI attributes; each attempt sent upstream a
 * `traceparent` naming its own span. With the collector down, requests are answered as before and
 * the spans are dropped and counted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { freePort } from '../../support/engines.ts'
import { type FaultUpstream, startFaultUpstream } from '../../support/fault-upstream.ts'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { type OtlpCollector, startOtlpCollector } from '../../support/otlp-collector.ts'

let up: FaultUpstream
let collector: OtlpCollector
beforeAll(async () => {
  up = await startFaultUpstream()
  collector = startOtlpCollector()
})
afterAll(async () => {
  await collector?.stop()
  await up?.stop()
})

function doc(telemetry: Record<string, unknown>) {
  return testConfigDoc({
    providers: [
      {
        prefix: 'up',
        kind: 'openai',
        base_url: `${up.url}/v1`,
        api_key: 'sk-up-0001',
        retry: { attempts: 1, backoff_ms: 10, max_backoff_ms: 20 },
        circuit: { failures: 100, cooldown_s: 60 },
        models: [
          {
            name: 'm1',
            upstream_name: 'm1',
            context_window: 8192,
            max_output_tokens: 64,
            features: ['system_messages'],
            pricing: { input: 1, output: 2 },
          },
        ],
      },
    ],
    plans: PLANS,
    default_plan: 'unlimited',
    telemetry: { export_interval_ms: 20, ...telemetry },
  })
}

const hex = (n: number) =>
  Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('')

async function chat(gw: TestGateway, key: string, traceparent?: string) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', ...(traceparent ? { traceparent } : {}) },
    body: JSON.stringify({ model: 'up/m1', messages: [{ role: 'user', content: 'hi' }] }),
  })
  const body = (await res.json()) as any
  return { res, body }
}

async function until<T>(what: string, f: () => T, ms = 15_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms
  for (;;) {
    const v = f()
    if (v) return v as NonNullable<T>
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

for (const protocol of ['http/json', 'http/protobuf'] as const) {
  describe(protocol, () => {
    let gw: TestGateway
    let key: string
    beforeAll(async () => {
      gw = await startGateway({
        doc: doc({ otlp_endpoint: collector.url, protocol, headers: { 'x-tenant': 't1' } }),
      })
      key = (await gw.key('acme', 'unlimited')).key
    })
    afterAll(() => gw?.stop())

    test("a retried request: the client's trace continued, a span per attempt, GenAI attributes, traceparent upstream", async () => {
      const traceId = hex(32)
      const clientSpan = hex(16)
      up.script({ model: 'm1' }, 'server_error', 'ok')
      const { res, body } = await chat(gw, key, `00-${traceId}-${clientSpan}-01`)
      expect(res.status).toBe(200)
      expect(res.headers.get('x-switchyard-attempts')).toBe('2')
      const spans = await until('three spans', () => {
        const s = collector.spans.filter((x) => x.traceId === traceId)
        return s.length >= 3 ? s : null
      })
      expect(collector.contentTypes).toContain(
        protocol === 'http/json' ? 'application/json' : 'application/x-protobuf',
      )
      expect(spans).toHaveLength(3)
      const server = spans.find((s) => s.kind === 2)!
      const attempts = spans
        .filter((s) => s.kind === 3)
        .sort(
          (a, b) => Number(a.attributes['switchyard.attempt']) - Number(b.attributes['switchyard.attempt']),
        )
      expect(server.parentSpanId).toBe(clientSpan)
      expect(server.name).toBe('chat up/m1')
      expect(server.resource['service.name']).toBe('switchyard')
      expect(server.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'up/m1',
        'gen_ai.response.model': 'up/m1',
        'gen_ai.provider.name': 'openai',
        'gen_ai.usage.input_tokens': body.usage.prompt_tokens,
        'gen_ai.usage.output_tokens': body.usage.completion_tokens,
        'switchyard.account': 'acme',
        'switchyard.attempts': 2,
        'http.response.status_code': 200,
      })
      expect(server.attributes['switchyard.key_id']).toBeString()
      expect(server.attributes['switchyard.cost_usd']).toBeGreaterThan(0)
      expect(server.end).toBeGreaterThan(server.start)
      expect(attempts).toHaveLength(2)
      for (const a of attempts) expect(a.parentSpanId).toBe(server.spanId)
      expect(attempts[0]!.attributes).toMatchObject({
        'switchyard.failure_kind': 'transient',
        'http.response.status_code': 500,
      })
      expect(attempts[0]!.status.code).toBe(2)
      expect(attempts[1]!.attributes).toMatchObject({
        'gen_ai.request.model': 'm1',
        'gen_ai.response.model': 'm1',
        'gen_ai.usage.output_tokens': body.usage.completion_tokens,
      })
      expect(attempts[1]!.attributes['switchyard.failure_kind']).toBeUndefined()
      // Upstream, each attempt carried its own span as the parent, in the client's trace.
      const seen = up
        .attempts({ model: 'm1' })
        .slice(-2)
        .map((a) => a.headers.traceparent)
      expect(seen).toEqual(attempts.map((a) => `00-${traceId}-${a.spanId}-01`))
      up.clear()
    })

    test('without a traceparent the request starts a trace of its own', async () => {
      const before = collector.spans.length
      const { res } = await chat(gw, key)
      expect(res.status).toBe(200)
      const server = await until('a root span', () => collector.spans.slice(before).find((s) => s.kind === 2))
      expect(server.parentSpanId).toBe('')
      expect(server.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(up.attempts().at(-1)!.headers.traceparent).toStartWith(`00-${server.traceId}-`)
    })

    test("a client's x-request-id: the span names the gateway's id, as the access log does, the client's beside it", async () => {
      const traceId = hex(32)
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          ...bearer(key),
          'content-type': 'application/json',
          'x-request-id': 'client-trace-7',
          traceparent: `00-${traceId}-${hex(16)}-01`,
        },
        body: JSON.stringify({ model: 'up/m1', messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-request-id')).toBe('client-trace-7')
      const server = await until('the server span', () =>
        collector.spans.find((s) => s.traceId === traceId && s.kind === 2),
      )
      expect(server.attributes['switchyard.request_id']).toMatch(/^req_[0-9a-f]{32}$/)
      expect(server.attributes['switchyard.client_request_id']).toBe('client-trace-7')
      const line = await until('the access line', () =>
        gw.logs
          .map((l) => JSON.parse(l))
          .find((l) => l.msg === 'access' && l.request_id === server.attributes['switchyard.request_id']),
      )
      expect(line.client_request_id).toBe('client-trace-7')
    })
  })
}

test('with the collector down, requests are answered and the spans dropped and counted', async () => {
  const gw = await startGateway({
    doc: doc({ otlp_endpoint: `http://127.0.0.1:${await freePort()}`, protocol: 'http/json' }),
  })
  try {
    const key = (await gw.key('acme', 'unlimited')).key
    const answers = await Promise.all(Array.from({ length: 20 }, () => chat(gw, key)))
    for (const a of answers) expect(a.res.status).toBe(200)
    const exporter = gw.deps.tracer!.exporter
    await exporter.flush()
    expect(exporter.dropped).toBe(40)
    expect(exporter.exported).toBe(0)
  } finally {
    await gw.stop()
  }
})
