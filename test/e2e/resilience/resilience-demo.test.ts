/**
 * The starter config's `demo/flaky` (DESIGN §10): offline, a newcomer asks it to fail and watches
 * the retries and the fallback happen — the answer comes from `demo/echo`, named in the response,
 * with `x-switchyard-attempts`; asked normally, `demo/flaky` answers itself.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { REPO } from '../../support/cli.ts'
import { ADMIN_TOKEN, bearer, PLANS, startGateway, type TestGateway } from '../../support/gateway.ts'

let gw: TestGateway
let key: string
beforeAll(async () => {
  const starter = Bun.YAML.parse(await Bun.file(join(REPO, 'switchyard.example.yaml')).text()) as any
  const demo = starter.providers.find((p: any) => p.prefix === 'demo')
  // The starter's demo provider as shipped, with shorter backoffs so the test is quick.
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [{ ...demo, retry: { backoff_ms: 10, max_backoff_ms: 20 } }],
      plans: PLANS,
      default_plan: 'free',
    },
  })
  key = (await gw.key('newcomer', 'free')).key
})
afterAll(() => gw.stop())

const ask = (content: string, stream = false) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo/flaky', messages: [{ role: 'user', content }], stream }),
  })

test('demo/flaky answers itself when all is well', async () => {
  const res = await ask('hello')
  expect(res.status).toBe(200)
  expect(((await res.json()) as any).model).toBe('demo/flaky')
  expect(res.headers.get('x-switchyard-attempts')).toBe('1')
})

test('asked to fail, it is retried twice, then demo/echo answers (JSON and stream)', async () => {
  const res = await ask('please fail')
  expect(res.status).toBe(200)
  const body = (await res.json()) as any
  expect(body.model).toBe('demo/echo')
  expect(body.choices[0].message.content).toBe('Echo: please fail')
  expect(res.headers.get('x-switchyard-attempts')).toBe('4')
  const s = await ask('fail again', true)
  expect(s.status).toBe(200)
  const text = await s.text()
  expect(text).toContain('"model":"demo/echo"')
  expect(text).toContain('data: [DONE]')
})
