/**
 * One account, one limit, three surfaces: a concurrent burst of 50 requests mixing Chat
 * Completions, Anthropic Messages and OpenAI Responses (streaming and not) on a plan with rpm 5
 * admits exactly 5, whatever the surface, and refuses the rest in each surface's own 429 shape.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway({ doc: testConfigDoc() })
})
afterAll(() => gw.stop())

function request(surface: number, key: string, stream: boolean): Promise<Response> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const [path, body] =
    surface === 0
      ? ['/v1/chat/completions', { model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }], stream }]
      : surface === 1
        ? [
            '/v1/messages',
            { model: 'demo/echo', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }], stream },
          ]
        : ['/v1/responses', { model: 'demo/echo', input: 'hi', stream }]
  return fetch(`${gw.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
}

test('50 concurrent requests over chat, messages and responses on rpm 5 → exactly 5 admitted', async () => {
  const { key } = await gw.key('three-surfaces', 'free')
  const res = await Promise.all(Array.from({ length: 50 }, (_, i) => request(i % 3, key, i % 2 === 0)))
  const bodies = await Promise.all(res.map((r) => r.text()))
  const statuses = res.map((r) => r.status)
  expect(statuses.filter((s) => s === 200)).toHaveLength(5)
  expect(statuses.filter((s) => s === 429)).toHaveLength(45)
  res.forEach((r, i) => {
    if (r.status !== 429) return
    const body = JSON.parse(bodies[i]!)
    // Messages refuses in Anthropic's shape, the others in OpenAI's.
    if (i % 3 === 1) expect(body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } })
    else expect(body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' })
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
  })
  await gw.deps.recorder.flush()
  const usage = (await (
    await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as any
  expect(usage.usage.by_model['demo/echo'].requests).toBe(5)
})
