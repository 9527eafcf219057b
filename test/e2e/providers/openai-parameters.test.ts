/**
 * Issue 22 finding 1: what an openai provider receives. OpenAI's reasoning models refuse
 * `max_tokens` ("Use 'max_completion_tokens' instead") and any temperature but 1; the mock refuses
 * them the same way, with OpenAI's exact error body. The gateway used to send `max_tokens` (the
 * model's maximum when the client gave none) and `temperature: 1` on every request, so
 * `openai/gpt-5`-style entries failed on the first call. Now no default the upstream applies by
 * itself is sent, and the limit goes as `max_completion_tokens` — or as `max_tokens` to a provider
 * configured with `max_tokens_param: max_tokens` (an older server that refuses the new name).
 * Every route to an openai provider: chat pass-through, chat translated (a `wire: responses`
 * provider's chat requests go through the adapter), messages → chat, responses → chat.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { refusedParameter } from '../../../scripts/mock-upstream/parameters.ts'
import { type MockUpstream, startMockUpstream } from '../../../scripts/mock-upstream.ts'
import { parseConfig } from '../../../src/config/index.ts'
import { ADMIN_TOKEN, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const model = (name: string) => ({
  name,
  context_window: 200_000,
  max_output_tokens: 128_000,
  features: ['streaming', 'tools', 'system_messages'],
})

let mock: MockUpstream
let gw: TestGateway
let key: string
beforeAll(async () => {
  mock = await startMockUpstream({ chunks: 3 })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        { prefix: 'oa', kind: 'openai', base_url: mock.url, api_key: 'sk-up', models: [model('gpt-5')] },
        {
          prefix: 'oar',
          kind: 'openai',
          wire: 'responses',
          base_url: mock.url,
          api_key: 'sk-up',
          models: [model('gpt-5')],
        },
        {
          prefix: 'old',
          kind: 'openai',
          max_tokens_param: 'max_tokens',
          base_url: mock.url,
          api_key: 'sk-up',
          models: [model('legacy-llama')],
        },
      ],
      plans: { ...PLANS, capped: { rpm: null, rpd: null, tpm: 50_000, models: ['*'] } },
      default_plan: 'free',
    },
  })
  key = (await gw.key('params', 'unlimited')).key
})
afterAll(async () => {
  await gw.stop()
  await mock.stop()
})

const messages = [{ role: 'user', content: 'hi' }]

async function post(path: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'x-api-key': key,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  })
}

/** The request, its answer read in full; the body the upstream got. */
async function sent(path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  mock.reset()
  const res = await post(path, body)
  const text = await res.text()
  expect({ status: res.status, text }).toMatchObject({ status: 200 })
  if (body.stream === true) expect(text).not.toMatch(/"error":\{|event: error/)
  return mock.stats.lastBody as Record<string, unknown>
}

test('the mock refuses max_tokens as OpenAI’s reasoning models do', () => {
  expect(JSON.parse(refusedParameter('gpt-5', { max_tokens: 5 })!)).toEqual({
    error: {
      message:
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      type: 'invalid_request_error',
      param: 'max_tokens',
      code: 'unsupported_parameter',
    },
  })
  expect(refusedParameter('gpt-5', { max_completion_tokens: 5, temperature: 1 })).toBeNull()
  expect(refusedParameter('gpt-5', { temperature: 0.2 })).toContain('unsupported_value')
  expect(refusedParameter('legacy-llama', { max_completion_tokens: 5 })).toContain('Unrecognized')
})

describe.each([
  ['chat pass-through', 'oa/gpt-5'],
  ['chat translated', 'oar/gpt-5'],
])('%s → a reasoning model', (_, id) => {
  test.each([false, true])('no limit, no temperature: none is sent (stream %p)', async (stream) => {
    const body = await sent('/v1/chat/completions', { model: id, messages, stream })
    expect(body.max_tokens).toBeUndefined()
    expect(body.max_completion_tokens).toBeUndefined()
    expect(body.temperature).toBeUndefined()
  })

  test.each([false, true])(
    'a client’s max_tokens goes as max_completion_tokens (stream %p)',
    async (stream) => {
      const body = await sent('/v1/chat/completions', { model: id, messages, stream, max_tokens: 50 })
      expect(body.max_completion_tokens).toBe(50)
      expect('max_tokens' in body).toBe(false)
    },
  )

  test('both names, agreeing, go as one; max_completion_tokens as sent', async () => {
    let body = await sent('/v1/chat/completions', {
      model: id,
      messages,
      max_tokens: 40,
      max_completion_tokens: 40,
    })
    expect(body.max_completion_tokens).toBe(40)
    expect('max_tokens' in body).toBe(false)
    body = await sent('/v1/chat/completions', {
      model: id,
      messages,
      max_completion_tokens: 30,
      max_tokens: null,
    })
    expect(body.max_completion_tokens).toBe(30)
    expect('max_tokens' in body).toBe(false)
  })

  test('the model maximum is still enforced on either name', async () => {
    for (const field of ['max_tokens', 'max_completion_tokens']) {
      const res = await post('/v1/chat/completions', { model: id, messages, [field]: 128_001 })
      expect(res.status).toBe(400)
      expect(((await res.json()) as any).error).toMatchObject({ code: 'invalid_value', param: field })
    }
  })
})

describe('translated surfaces → a reasoning model', () => {
  test.each([false, true])(
    'messages: max_tokens goes as max_completion_tokens (stream %p)',
    async (stream) => {
      const body = await sent('/v1/messages', { model: 'oa/gpt-5', max_tokens: 100, messages, stream })
      expect(body.max_completion_tokens).toBe(100)
      expect('max_tokens' in body).toBe(false)
      expect(body.temperature).toBeUndefined()
    },
  )

  test.each([false, true])(
    'responses: max_output_tokens goes as max_completion_tokens (stream %p)',
    async (stream) => {
      let body = await sent('/v1/responses', {
        model: 'oa/gpt-5',
        input: 'hi',
        max_output_tokens: 70,
        stream,
      })
      expect(body.max_completion_tokens).toBe(70)
      expect('max_tokens' in body).toBe(false)
      body = await sent('/v1/responses', { model: 'oa/gpt-5', input: 'hi', stream })
      expect(body.max_completion_tokens).toBeUndefined()
      expect(body.max_tokens).toBeUndefined()
      expect(body.temperature).toBeUndefined()
    },
  )

  test('what the client gets is as before: the response object names temperature 1, no limit', async () => {
    const res = await post('/v1/responses', { model: 'oa/gpt-5', input: 'hi' })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ temperature: 1, max_output_tokens: null, status: 'completed' })
  })
})

describe('max_tokens_param: max_tokens (an older server that refuses the new name)', () => {
  test.each([false, true])('chat: max_completion_tokens goes as max_tokens (stream %p)', async (stream) => {
    const body = await sent('/v1/chat/completions', {
      model: 'old/legacy-llama',
      messages,
      stream,
      max_completion_tokens: 25,
    })
    expect(body.max_tokens).toBe(25)
    expect('max_completion_tokens' in body).toBe(false)
  })

  test('messages and responses send max_tokens', async () => {
    let body = await sent('/v1/messages', { model: 'old/legacy-llama', max_tokens: 60, messages })
    expect(body.max_tokens).toBe(60)
    expect('max_completion_tokens' in body).toBe(false)
    body = await sent('/v1/responses', { model: 'old/legacy-llama', input: 'hi', max_output_tokens: 61 })
    expect(body.max_tokens).toBe(61)
    expect('max_completion_tokens' in body).toBe(false)
  })

  test('the setting is for openai providers only', () => {
    const doc = testConfigDoc()
    ;(doc.providers as any[])[0].max_tokens_param = 'max_tokens'
    expect(() => parseConfig(doc, 'test')).toThrow(/max_tokens_param/)
  })
})

describe('the output allowance under a token limit, on the chat pass-through with no client cap', () => {
  test.each([
    ['oa/gpt-5', 'max_completion_tokens', 'max_tokens'],
    ['old/legacy-llama', 'max_tokens', 'max_completion_tokens'],
  ])('%s gets it as %s, never %s', async (id, field, other) => {
    // An account of its own: the allowance takes what its TPM leaves, until the flush settles it.
    const cappedKey = (await gw.key(`capped-${field}`, 'capped')).key
    mock.reset()
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cappedKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: id, messages }),
    })
    expect({ status: res.status, text: await res.text() }).toMatchObject({ status: 200 })
    const body = mock.stats.lastBody as Record<string, unknown>
    const cap = Number(res.headers.get('x-switchyard-max-tokens'))
    expect(cap).toBeGreaterThan(0)
    expect(cap).toBeLessThan(50_000)
    expect(body[field]).toBe(cap)
    expect(body[other]).toBeUndefined()
  })
})
