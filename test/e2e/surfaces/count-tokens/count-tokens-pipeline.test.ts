/**
 * count_tokens runs on the pipeline as an operation that is not admitted: the shared steps refuse
 * as on every surface (a key, a chat model the plan includes), its own throttle (20 calls a second
 * per key) answers 429 in Anthropic's shape, and nothing is spent from the limits or recorded.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway({ doc: testConfigDoc() })
})
afterAll(() => gw.stop())

const count = (key: string, model = 'demo/echo') =>
  fetch(`${gw.url}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello there' }] }),
  })

test('45 calls at once: the throttle refuses past 20 a second, in Anthropic shape; nothing is admitted or recorded', async () => {
  const { key } = await gw.key('counter', 'free') // rpm 5
  const res = await Promise.all(Array.from({ length: 45 }, () => count(key)))
  const bodies = await Promise.all(res.map((r) => r.json() as Promise<any>))
  const ok = res.filter((r) => r.status === 200)
  const throttled = res.flatMap((r, i) => (r.status === 429 ? [{ r, body: bodies[i] }] : []))
  // All 45 land within two one-second slots at most: at least 5 refused, at most 40 answered.
  expect(ok.length + throttled.length).toBe(45)
  expect(ok.length).toBeGreaterThanOrEqual(20)
  expect(throttled.length).toBeGreaterThanOrEqual(5)
  for (const { r, body } of throttled) {
    expect(body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } })
    expect(r.headers.get('x-switchyard-error-code')).toBe('count_tokens_throttled')
    expect(r.headers.get('retry-after')).toBe('1')
  }
  expect(bodies.find((_, i) => res[i]!.status === 200).input_tokens).toBeGreaterThan(0)

  await gw.deps.recorder.flush()
  const usage = (await (
    await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as any
  expect(usage.rate_limits.minute.used).toBe(0)
  expect(usage.usage.by_model['demo/echo']).toBeUndefined()
})

test('the shared steps refuse first: no key → 401, a model outside the plan → 403', async () => {
  const none = await fetch(`${gw.url}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  expect(none.status).toBe(401)
  const { key } = await gw.key('counter-plan', 'free')
  const outside = await count(key, 'demo/echo-pro')
  expect(outside.status).toBe(403)
  expect(outside.headers.get('x-switchyard-error-code')).toBe('model_not_in_plan')
})
