/**
 * An anthropic model's temperature range is Anthropic's 0–1 unless its entry narrows it: a chat or
 * Responses request above it is the feature check's 400 naming `temperature`, before anything is
 * admitted or sent (it was sent, and came back as Anthropic's own 400); `/v1/models` says 0–1.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startFakeAnthropic } from '../../support/fake-anthropic.ts'
import type { FakeUpstream } from '../../support/fake-upstream.ts'
import { ADMIN_TOKEN, bearer, PLANS, startGateway, type TestGateway } from '../../support/gateway.ts'

let anthropic: FakeUpstream<string>
let gw: TestGateway
let key: string

beforeAll(async () => {
  anthropic = await startFakeAnthropic({ apiKey: 'sk-ant-test' })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'anthropic',
          kind: 'anthropic',
          base_url: anthropic.url,
          api_key: 'sk-ant-test',
          models: [
            { name: 'text', context_window: 200_000, max_output_tokens: 4096, features: ['streaming'] },
          ],
        },
      ],
      plans: PLANS,
      default_plan: 'unlimited',
    },
  })
  key = (await gw.key('temperature', 'unlimited')).key
})
afterAll(async () => {
  await gw.stop()
  await anthropic.stop()
})

const post = (path: string, body: unknown) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

test('chat and responses: a temperature above 1 → 400 unsupported_feature naming temperature; the upstream sees nothing', async () => {
  const before = anthropic.requests().length
  const requests: Array<[string, unknown]> = [
    [
      '/v1/chat/completions',
      { model: 'anthropic/text', temperature: 1.5, messages: [{ role: 'user', content: 'hi' }] },
    ],
    ['/v1/responses', { model: 'anthropic/text', temperature: 1.5, input: 'hi' }],
  ]
  for (const [path, body] of requests) {
    const res = await post(path, body)
    expect(res.status).toBe(400)
    const err = ((await res.json()) as { error: { code: string; param: string; message: string } }).error
    expect(err).toMatchObject({ code: 'unsupported_feature', param: 'temperature' })
    expect(err.message).toContain('from 0 to 1')
  }
  expect(anthropic.requests().length).toBe(before)
})

test('within 0–1 the temperature is sent as given', async () => {
  const res = await post('/v1/chat/completions', {
    model: 'anthropic/text',
    temperature: 0.7,
    messages: [{ role: 'user', content: 'hi' }],
  })
  expect(res.status).toBe(200)
  await res.json()
  expect(anthropic.lastRequest()!.body.temperature).toBe(0.7)
})

test('/v1/models states the range', async () => {
  const res = await fetch(`${gw.url}/v1/models`, { headers: bearer(key) })
  const models = ((await res.json()) as { data: Array<{ id: string; temperature: unknown }> }).data
  expect(models.find((m) => m.id === 'anthropic/text')!.temperature).toEqual({ min: 0, max: 1 })
})
