/**
 * Refusals on the Messages surface come in Anthropic's shape, on JSON and stream requests alike;
 * one admission per request whatever the surface (a burst mixing chat and messages on rpm 5
 * admits exactly 5); count_tokens needs a key but is never admitted; `GET /v1/models` answers
 * Anthropic-style clients in Anthropic's list shape.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FAKE_COUNT_TOKENS } from '../../../support/fake-anthropic.ts'
import {
  expectAnthropicError,
  hello,
  type MessagesBed,
  startMessagesBed,
} from '../../../support/messages-bed.ts'

let bed: MessagesBed

beforeAll(async () => {
  bed = await startMessagesBed()
})
afterAll(async () => {
  await bed.stop()
})

const body = (extra: Record<string, unknown> = {}) => ({
  model: 'mock/gpt-4o-mini',
  max_tokens: 64,
  messages: hello,
  ...extra,
})

describe.each([false, true])('refusals (stream: %p)', (stream) => {
  const req = (extra: Record<string, unknown> = {}) => body({ stream, ...extra })

  test('no key → 401 authentication_error', async () => {
    const res = await fetch(`${bed.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(req()),
    })
    const err = await expectAnthropicError(res, 401, 'authentication_error')
    // Anthropic's clients send the key as x-api-key: the message names that header too.
    expect(err.error.message).toContain('x-api-key')
  })

  test('a wrong x-api-key → 401; the key in Authorization: Bearer works too', async () => {
    await expectAnthropicError(
      await bed.post(req(), { 'x-api-key': 'sk-sy-wrong' }),
      401,
      'authentication_error',
    )
    const res = await fetch(`${bed.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(req()),
    })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
  })

  test('disabled key → 403 permission_error', async () => {
    const { id, key } = await bed.gw.key(`disabled-${stream}`, 'unlimited')
    await bed.gw.deps.accounts.setKeyState(id, 'disabled')
    const err = await expectAnthropicError(
      await bed.post(req(), { 'x-api-key': key }),
      403,
      'permission_error',
    )
    expect(err.error.message).toContain('disabled')
  })

  test('unknown model → 404 not_found_error', async () => {
    const err = await expectAnthropicError(
      await bed.post(req({ model: 'mock/nope' })),
      404,
      'not_found_error',
    )
    expect(err.error.message).toContain('mock/nope')
  })

  test('a feature the model lacks → 400 naming the field in Messages terms', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ thinking: { type: 'enabled', budget_tokens: 2000 } }, 'thinking'],
      [{ system: 'Be brief.' }, 'system'],
      [{ tools: [{ name: 'f', input_schema: { type: 'object' } }] }, 'tools'],
      [
        {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'look' },
                { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
              ],
            },
          ],
        },
        'messages[0].content[1]',
      ],
    ]
    for (const [extra, field] of cases) {
      const res = await bed.post(req({ model: stream ? 'mock/stream-only' : 'mock/bare', ...extra }))
      expect(res.headers.get('x-switchyard-error-code')).toBe('unsupported_feature')
      const err = await expectAnthropicError(res, 400, 'invalid_request_error')
      expect(err.error.message).toContain(`which ${field} uses`)
    }
  })

  test('over the limit → 429 rate_limit_error with retry-after and both header families', async () => {
    const { key } = await bed.gw.key(`limited-${stream}`, 'tiny')
    for (let i = 0; i < 5; i++) {
      const ok = await bed.post(req(), { 'x-api-key': key })
      expect(ok.status).toBe(200)
      expect(ok.headers.get('anthropic-ratelimit-requests-limit')).toBe('5')
      expect(ok.headers.get('anthropic-ratelimit-requests-remaining')).toBe(String(4 - i))
      expect(ok.headers.get('x-ratelimit-remaining-requests')).toBe(String(4 - i))
      await ok.arrayBuffer()
    }
    const res = await bed.post(req(), { 'x-api-key': key })
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(res.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0')
    expect(Date.parse(res.headers.get('anthropic-ratelimit-requests-reset')!)).toBeGreaterThan(Date.now())
    await expectAnthropicError(res, 429, 'rate_limit_error')
  })
})

test('a burst of 50 concurrent requests mixing chat and messages on an rpm-5 account admits exactly 5', async () => {
  const { key } = await bed.gw.key('burst', 'tiny')
  const { key: key2 } = await bed.gw.key('burst', 'tiny')
  const sends = Array.from({ length: 50 }, (_, i) =>
    i % 2 === 0
      ? bed.post(body({ stream: i % 4 === 0 }), { 'x-api-key': i % 3 ? key : key2 })
      : fetch(`${bed.gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${i % 3 ? key : key2}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mock/gpt-4o-mini', messages: hello, stream: i % 4 === 1 }),
        }),
  )
  const responses = await Promise.all(sends)
  const statuses = await Promise.all(
    responses.map(async (r) => {
      await r.arrayBuffer()
      return r.status
    }),
  )
  expect(statuses.filter((s) => s === 200).length).toBe(5)
  expect(statuses.filter((s) => s === 429).length).toBe(45)
})

describe('count_tokens', () => {
  const count = (payload: unknown, headers: Record<string, string> = {}) =>
    fetch(`${bed.gw.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: {
        'x-api-key': bed.key,
        'content-type': 'application/json',
        'anthropic-beta': 'x',
        ...headers,
      },
      body: JSON.stringify(payload),
    })

  test('anthropic providers answer upstream (model swapped); the request is not admitted', async () => {
    const { key } = await bed.gw.key('count-a', 'tiny')
    for (let i = 0; i < 8; i++) {
      const res = await count(
        { model: 'anthropic/text', messages: hello },
        {
          'x-api-key': key,
          'anthropic-beta': 'interleaved-thinking-2025-05-14,context-management-2025-06-27',
        },
      )
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ input_tokens: FAKE_COUNT_TOKENS })
    }
    const seen = bed.anthropic.lastRequest()!
    expect(seen.path).toBe('/v1/messages/count_tokens')
    expect(seen.body.model).toBe('text')
    // Eight counts on an rpm-5 plan and the key still has all 5 requests.
    const ok = await bed.post(body(), { 'x-api-key': key })
    expect(ok.headers.get('x-ratelimit-remaining-requests')).toBe('4')
    await ok.arrayBuffer()
  })

  test('other kinds: an o200k_base estimate that grows with the text, said to be an estimate', async () => {
    const small = await count({ model: 'mock/gpt-4o-mini', messages: hello })
    expect(small.status).toBe(200)
    expect(small.headers.get('x-switchyard-token-count')).toContain('estimate')
    const a = ((await small.json()) as { input_tokens: number }).input_tokens
    const big = await count({
      model: 'mock/gpt-4o-mini',
      system: 'You are a careful assistant.',
      messages: [{ role: 'user', content: 'Hello there, how many tokens is this sentence exactly?' }],
      tools: [
        { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
      ],
    })
    const b = ((await big.json()) as { input_tokens: number }).input_tokens
    expect(a).toBeGreaterThan(3)
    expect(b).toBeGreaterThan(a + 15)
  })

  test('needs a valid key; bad bodies are 400 in Anthropic shape', async () => {
    await expectAnthropicError(
      await count({ model: 'mock/gpt-4o-mini', messages: hello }, { 'x-api-key': 'nope' }),
      401,
      'authentication_error',
    )
    await expectAnthropicError(await count({ model: 'mock/gpt-4o-mini' }), 400, 'invalid_request_error')
  })

  test.each([
    [{ max_tokens: -1 }],
    [{ max_tokens: 1.5 }],
    [{ temperature: 'hot' }],
    [{ stream: 'yes' }],
    [{ top_k: -1 }],
    [{ stop_sequences: 'END' }],
  ])('refuses %j as /v1/messages does (one validation), on every route', async (fields) => {
    const { key } = await bed.gw.key(
      `count-same-${Object.keys(fields)[0]}-${String(Object.values(fields)[0])}`,
      'unlimited',
    )
    for (const model of ['demo/agent', 'anthropic/text']) {
      const counted = await count({ model, messages: hello, ...fields }, { 'x-api-key': key })
      const sent = await bed.post({ model, max_tokens: 64, messages: hello, ...fields }, { 'x-api-key': key })
      const [a, b] = [(await counted.json()) as any, (await sent.json()) as any]
      expect([counted.status, sent.status]).toEqual([400, 400])
      expect(a.error.message).toBe(b.error.message)
      expect(counted.headers.get('x-switchyard-error-code')).toBe(sent.headers.get('x-switchyard-error-code'))
    }
  })

  test('its own throttle: past 20 calls in one second → 429', async () => {
    const { key } = await bed.gw.key('count-throttle', 'unlimited')
    const statuses = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const r = await count({ model: 'demo/agent', messages: hello }, { 'x-api-key': key })
        await r.arrayBuffer()
        return r.status
      }),
    )
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0)
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(40)
  })
})

test('GET /v1/models with anthropic-version answers in Anthropic’s list shape (x-api-key accepted)', async () => {
  const res = await fetch(`${bed.gw.url}/v1/models`, {
    headers: { 'x-api-key': bed.key, 'anthropic-version': '2023-06-01' },
  })
  expect(res.status).toBe(200)
  const body = (await res.json()) as {
    data: Array<Record<string, unknown>>
    has_more: boolean
    first_id: string
    last_id: string
  }
  expect(body.has_more).toBe(false)
  const agent = body.data.find((m) => m.id === 'demo/agent')!
  expect(agent).toMatchObject({ type: 'model', id: 'demo/agent', display_name: expect.any(String) })
  expect(Date.parse(String(agent.created_at))).toBeGreaterThan(0)
  expect(body.first_id).toBe(String(body.data[0]!.id))
  expect(body.last_id).toBe(String(body.data.at(-1)!.id))
  const one = await fetch(`${bed.gw.url}/v1/models/demo/agent`, {
    headers: { 'x-api-key': bed.key, 'anthropic-version': '2023-06-01' },
  })
  expect(await one.json()).toMatchObject({ type: 'model', id: 'demo/agent' })
  // Without the header: OpenAI's shape, as before.
  const openai = await fetch(`${bed.gw.url}/v1/models`, { headers: { authorization: `Bearer ${bed.key}` } })
  expect(((await openai.json()) as { object: string }).object).toBe('list')
})

test("the Anthropic SDK's models.list / retrieve: errors in Anthropic's shape with request-id; OpenAI's without the header", async () => {
  const client = bed.client()
  const listed = await client.models.list()
  expect(listed.data.some((m) => m.id === 'demo/agent')).toBe(true)
  const found = await client.models.retrieve('demo/agent')
  expect(found.id).toBe('demo/agent')
  expect((found as { _request_id?: string })._request_id).toStartWith('req_')

  const missing = await client.models.retrieve('mock/nope').then(
    () => null,
    (e: unknown) => e as { status: number; requestID: string; error: Record<string, any> },
  )
  expect(missing?.status).toBe(404)
  expect(missing?.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } })
  expect(missing?.requestID).toBe(missing?.error.request_id)

  const res = await fetch(`${bed.gw.url}/v1/models`, {
    headers: { 'x-api-key': 'sk-sy-not-a-key', 'anthropic-version': '2023-06-01' },
  })
  await expectAnthropicError(res, 401, 'authentication_error')
  expect(res.headers.get('request-id')).toBe(res.headers.get('x-request-id'))

  const openai = await fetch(`${bed.gw.url}/v1/models/mock/nope`, {
    headers: { authorization: `Bearer ${bed.key}` },
  })
  expect(openai.status).toBe(404)
  expect(((await openai.json()) as { error: { code: string } }).error.code).toBe('model_not_found')
  expect(openai.headers.get('request-id')).toBeNull()
})
