/**
 * `/v1/embeddings` on the request pipeline: the operation is a key (a chat model on embeddings and
 * an embedding model on every chat surface → 400 naming `model`, uncounted), RPM is spent once per
 * admitted embeddings request, usage is recorded with the surface `embeddings` and shows in
 * `/v1/usage`, and `/v1/models` says each model's type.
 */
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cli } from '../../../support/cli.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'
import { writeConfig } from '../../../support/process.ts'

const doc = testConfigDoc({
  providers: [
    {
      ...DEMO_PROVIDER,
      models: [
        ...DEMO_PROVIDER.models,
        { name: 'embed', type: 'embedding', context_window: 8192, dimensions: 64, tier: 'free' },
        // $1,000 per million input tokens: 1,000 micro-dollars a token, so costs are exact.
        {
          name: 'embed-priced',
          type: 'embedding',
          context_window: 8192,
          pricing: { input: 1000, output: 0 },
        },
      ],
    },
  ],
})
let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway({ doc })
})
afterAll(() => gw.stop())

const post = (path: string, key: string, body: unknown) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

const usage = async (key: string) => {
  await gw.deps.recorder.flush()
  const res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  return ((await res.json()) as any).usage
}

describe('the operation is a key', () => {
  test('a chat model on /v1/embeddings → 400 naming model, not counted', async () => {
    const { key } = await gw.key('op-chat-on-embeddings', 'unlimited')
    const res = await post('/v1/embeddings', key, { model: 'demo/echo', input: 'hi' })
    expect(res.status).toBe(400)
    const body = (await res.json()) as any
    expect(body.error).toMatchObject({ param: 'model', code: 'model_not_supported' })
    expect(body.error.message).toContain("'demo/echo' is a chat model")
    expect((await usage(key)).by_model['demo/echo']).toBeUndefined()
  })

  test('an embedding model on chat, messages, responses and count_tokens → 400 naming model', async () => {
    const { key } = await gw.key('op-embeddings-on-chat', 'unlimited')
    const messages = [{ role: 'user', content: 'hi' }]
    const cases: Array<[string, unknown]> = [
      ['/v1/chat/completions', { model: 'demo/embed', messages }],
      ['/v1/chat/completions', { model: 'demo/embed', messages, stream: true }],
      ['/v1/messages', { model: 'demo/embed', max_tokens: 16, messages }],
      ['/v1/messages/count_tokens', { model: 'demo/embed', messages }],
      ['/v1/responses', { model: 'demo/embed', input: 'hi' }],
    ]
    for (const [path, body] of cases) {
      const res = await post(path, key, body)
      expect(res.status, path).toBe(400)
      const json = (await res.json()) as any
      if (path.startsWith('/v1/messages')) {
        // Anthropic's error body has no param: the code header and the message name it.
        expect(json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
        expect(res.headers.get('x-switchyard-error-code')).toBe('model_not_supported')
        expect(json.error.message).toContain("'demo/embed' is an embedding model")
      } else expect(json.error, path).toMatchObject({ param: 'model', code: 'model_not_supported' })
    }
    expect((await usage(key)).by_model['demo/embed']).toBeUndefined()
  })

  test('a missing or empty input → 400 naming input', async () => {
    const { key } = await gw.key('op-input', 'unlimited')
    for (const body of [
      { model: 'demo/embed' },
      { model: 'demo/embed', input: '' },
      { model: 'demo/embed', input: [] },
    ]) {
      const res = await post('/v1/embeddings', key, body)
      expect(res.status).toBe(400)
      expect(((await res.json()) as any).error.param).toBe('input')
    }
  })
})

test('a token id past any vocabulary → 400 naming the item, before admission', async () => {
  const { key } = await gw.key('op-huge-token', 'free') // rpm 5
  for (const input of ['[5, 2147483648]', '[[5], [100000000000000000000]]', '[9007199254740993]']) {
    const res = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: `{"model": "demo/embed", "input": ${input}}`,
    })
    expect(res.status).toBe(400)
    const error = ((await res.json()) as any).error
    expect(error.param).toMatch(/^input\[\d+\](\[0\])?$/)
    expect(error.message).toContain('token id')
  }
  // Not admitted: the whole minute's requests are left.
  const ok = await post('/v1/embeddings', key, { model: 'demo/embed', input: [5, 2147483647] })
  expect(ok.status).toBe(200)
  expect(ok.headers.get('x-ratelimit-remaining-requests')).toBe('4')
})

// The demo counts a text at 4 characters a token; it embedded 8,750 of them in a window of 8,192 and
// said so in its usage, where OpenAI refuses the input.
test("a text past the demo model's window by the demo's own count → 400 naming the item, not counted", async () => {
  const { key } = await gw.key('demo-window', 'free') // rpm 5
  const long = 'word '.repeat(7_000) // 35,000 characters: 8,750 tokens by the demo's count
  for (const [input, param] of [
    [long, 'input'],
    [['fits', long], 'input[1]'],
  ] as const) {
    const res = await post('/v1/embeddings', key, { model: 'demo/embed', input })
    expect(res.status).toBe(400)
    const error = ((await res.json()) as any).error
    expect(error).toMatchObject({ param, code: 'context_length_exceeded' })
    expect(error.message).toContain('8192')
  }
  const fits = await post('/v1/embeddings', key, { model: 'demo/embed', input: 'word '.repeat(6_500) })
  expect(fits.status).toBe(200)
  expect(((await fits.json()) as any).usage.prompt_tokens).toBeLessThanOrEqual(8192)
  expect(fits.headers.get('x-ratelimit-remaining-requests')).toBe('4')
})

test("the demo's answer is bounded (16,384 values, or the input's characters if more): past it 400 answer_too_large naming input, not counted", async () => {
  const { key } = await gw.key('embed-bound', 'unlimited')
  const inputs = (n: number) => Array.from({ length: n }, (_, i) => `text ${i}`)
  // demo/embed has 64 values: 2,048 one-word inputs asked 11 MB of vectors before the bound.
  const big = await post('/v1/embeddings', key, { model: 'demo/embed', input: inputs(2048) })
  expect(big.status).toBe(400)
  expect(((await big.json()) as any).error).toMatchObject({ param: 'input', code: 'answer_too_large' })
  const over = await post('/v1/embeddings', key, { model: 'demo/embed', input: inputs(257) })
  expect(over.status).toBe(400)
  expect((await usage(key)).by_model['demo/embed']).toBeUndefined()
  const fits = await post('/v1/embeddings', key, { model: 'demo/embed', input: inputs(256) })
  expect(fits.status).toBe(200)
  expect(((await fits.json()) as any).data).toHaveLength(256)
  // Fewer dimensions, more inputs: 2,048 at 8 values.
  const small = await post('/v1/embeddings', key, { model: 'demo/embed', input: inputs(2048), dimensions: 8 })
  expect(small.status).toBe(200)
  expect(((await small.json()) as any).data[2047].embedding).toHaveLength(8)
  // Past 16,384, as many values as the input has characters: an SDK's batch of documents (512 of
  // 300 characters, 32,768 values) is answered; the same count of one-word inputs is not.
  const docs = await post('/v1/embeddings', key, {
    model: 'demo/embed',
    input: inputs(512).map((t) => t.padEnd(300, '.')),
  })
  expect(docs.status).toBe(200)
  expect(((await docs.json()) as any).data).toHaveLength(512)
  expect((await post('/v1/embeddings', key, { model: 'demo/embed', input: inputs(512) })).status).toBe(400)
})

test('RPM is spent once per admitted embeddings request; usage says embeddings', async () => {
  const { key } = await gw.key('embed-rpm', 'free') // rpm 5
  // Refused before admission: not counted.
  expect((await post('/v1/embeddings', key, { model: 'demo/embed', input: '' })).status).toBe(400)
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) {
    const res = await post('/v1/embeddings', key, { model: 'demo/embed', input: [`text ${i}`, 'two'] })
    statuses.push(res.status)
    if (res.status === 200) {
      expect(res.headers.get('x-ratelimit-remaining-requests')).toBe(String(4 - i))
      const body = (await res.json()) as any
      expect(body.data).toHaveLength(2)
      expect(body.data[0].embedding).toHaveLength(64)
    } else await res.text()
  }
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
  const u = await usage(key)
  expect(u.by_model['demo/embed'].requests).toBe(5)
  expect(u.by_model['demo/embed'].prompt_tokens).toBeGreaterThan(0)

  const rows = new Database(join(gw.dir, 'switchyard.db'), { readonly: true })
    .query(
      `SELECT r.surface, r.status, r.completion_tokens FROM requests r JOIN api_keys k ON k.id = r.key_id
       WHERE k.account_id = (SELECT id FROM accounts WHERE name = ?) ORDER BY r.id`,
    )
    .all('embed-rpm') as Array<{ surface: string; status: number; completion_tokens: number | null }>
  expect(rows.filter((r) => r.status === 200)).toEqual(
    Array.from({ length: 5 }, () => ({ surface: 'embeddings', status: 200, completion_tokens: 0 })),
  )
})

test("an embedding model's pricing applies: its input tokens at its input price", async () => {
  const { key } = await gw.key('embed-priced', 'unlimited')
  for (const input of ['a short text', ['two texts', 'in one request']]) {
    const res = await post('/v1/embeddings', key, { model: 'demo/embed-priced', input })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
  }
  const u = (await usage(key)).by_model['demo/embed-priced']
  expect(u.requests).toBe(2)
  expect(u.prompt_tokens).toBeGreaterThan(0)
  expect(u.cost_usd).toBeCloseTo((u.prompt_tokens * 1000) / 1e6, 9)
})

test("/v1/models shows each model's type (and an embedding model's dimensions)", async () => {
  const { key } = await gw.key('models-type', 'unlimited')
  const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
  const data = ((await res.json()) as any).data as any[]
  expect(data.find((m) => m.id === 'demo/echo')).toMatchObject({ type: 'chat' })
  expect(data.find((m) => m.id === 'demo/embed')).toMatchObject({ type: 'embedding', dimensions: 64 })
})

// An embedding model was listed with max_output_tokens: 0 and a temperature range, which mean
// nothing for it; a chat model keeps both. So does `switchyard models`, which prints the same list.
test('/v1/models, /v1/models/{id} and switchyard models give max_output_tokens and temperature for chat models only', async () => {
  const { key } = await gw.key('models-chat-only', 'unlimited')
  const get = async (path: string) =>
    (await (await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any
  const list = (await get('/v1/models')).data as any[]
  const cliList = (await cli(['models', '--json', '--config', writeConfig(gw.dir, doc)])).json().data as any[]
  for (const models of [list, cliList]) {
    const chat = models.find((m) => m.id === 'demo/echo')
    expect(chat.max_output_tokens).toBeGreaterThan(0)
    expect(chat.temperature).toEqual({ min: 0, max: 2 })
    for (const id of ['demo/embed', 'demo/embed-priced']) {
      const embed = models.find((m) => m.id === id)
      expect(embed.type).toBe('embedding')
      expect(Object.keys(embed)).not.toContain('max_output_tokens')
      expect(Object.keys(embed)).not.toContain('temperature')
    }
  }
  const one = await get('/v1/models/demo/embed')
  expect([one.id, 'max_output_tokens' in one, 'temperature' in one]).toEqual(['demo/embed', false, false])
})
