/**
 * Aliases and virtual models (DESIGN §13, issue 45) end to end: the real gateway on port 0 against
 * the mock OpenAI upstream over real sockets. One id for one model, a pattern for the dated ids an
 * agent sends, a 3:1 pool in smooth round-robin order, a member without tools skipped, a member
 * failing over to the others, hidden and listed aliases, plans and keys allowing an alias by id;
 * the response's `model`, the cost and the request log name the target that answered.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type MockUpstream, startMockUpstream } from '../../../scripts/mock-upstream.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

let mock: MockUpstream
let gw: TestGateway
const keys: Record<string, string> = {}

const model = (name: string, features: string[], extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 4096,
  features,
  ...extra,
})
const TOOLS = ['streaming', 'tools', 'system_messages']
const TEXT = ['streaming', 'system_messages']

beforeAll(async () => {
  mock = await startMockUpstream({ chunks: 2 })
  const upstream = { kind: 'openai', base_url: mock.url, api_key: 'sk-test' }
  gw = await startGateway({
    doc: testConfigDoc({
      usage: { flush_ms: 10 },
      providers: [
        {
          prefix: 'up',
          ...upstream,
          models: [
            // Prices differ so the cost shows which one answered (USD per 1M tokens).
            model('fast', TOOLS, { pricing: { input: 1, output: 2 } }),
            model('plain', TEXT, { pricing: { input: 10, output: 20 } }),
            // The mock answers a model named fault-500 with a 500 every time.
            model('broken', TOOLS, { upstream_name: 'fault-500' }),
            { name: 'emb', type: 'embedding', context_window: 8192, dimensions: 1536 },
          ],
        },
        // Reached over the OpenAI wire here: the catalogue is the point, not the provider's kind.
        { prefix: 'anthropic', ...upstream, models: [model('claude-haiku-4-5', TOOLS)] },
      ],
      aliases: [
        { id: 'team/fast', to: 'up/fast', description: 'The fast one' },
        { id: 'anthropic/claude-haiku-4-5-*', to: 'anthropic/claude-haiku-4-5' },
        // Shorter than the one above: the dated haiku ids must not land here.
        { id: 'anthropic/claude-*', to: 'up/plain' },
        {
          id: 'team/coder',
          to: [
            { model: 'up/fast', weight: 3 },
            { model: 'up/plain', weight: 1 },
          ],
        },
        { id: 'team/hidden', to: 'up/plain', listed: false },
        { id: 'team/emb', to: 'up/emb' },
        { id: 'team/sturdy', to: [{ model: 'up/broken', weight: 5 }, { model: 'up/plain' }] },
      ],
      plans: {
        all: { rpm: null, rpd: null, models: ['*'] },
        aliasonly: { rpm: null, rpd: null, models: ['team/fast'] },
        direct: { rpm: null, rpd: null, models: ['up/fast', 'up/plain'] },
      },
      default_plan: 'all',
    }),
  })
  for (const plan of ['all', 'aliasonly', 'direct']) keys[plan] = (await gw.key(plan, plan)).key
  await gw.key('keyed', 'all')
  keys.keyed = (await gw.deps.accounts.createKey('keyed', 'alias key', { models: ['team/fast'] })).key
})

afterAll(async () => {
  await gw?.stop()
  await mock?.stop()
})

const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
}

async function chat(key: string, modelId: string, extra: Record<string, unknown> = {}) {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: modelId, messages: [{ role: 'user', content: 'hi' }], ...extra }),
  })
  return { status: r.status, body: (await r.json()) as any, attempts: r.headers.get('x-switchyard-attempts') }
}

async function listed(key: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${gw.url}/v1/models`, { headers: { ...bearer(key), ...headers } })
  expect(r.status).toBe(200)
  return (await r.json()) as any
}

async function requestLog(account: string): Promise<any[]> {
  await gw.deps.recorder.flush()
  const r = await fetch(`${gw.url}/admin/v1/requests?account=${account}`, { headers: bearer(ADMIN_TOKEN) })
  return ((await r.json()) as any).data
}

describe('aliases', () => {
  test('an alias answers as its target: the response, the cost and the request log name the target', async () => {
    const a = await chat(keys.all!, 'team/fast')
    expect(a.status).toBe(200)
    expect(a.body.model).toBe('up/fast')
    expect(a.body.choices[0].message.content.length).toBeGreaterThan(0)
    const rows = await requestLog('all')
    expect(rows[0]).toMatchObject({ model: 'up/fast', answered_by: null })
    // up/fast's prices (1 and 2 USD per 1M tokens), not up/plain's.
    const { prompt_tokens: input, completion_tokens: output } = a.body.usage
    expect(rows[0].cost_usd).toBeCloseTo((input * 1 + output * 2) / 1e6, 9)
  })

  test('a pattern takes the dated id an agent sends; the longest pattern wins', async () => {
    const a = await chat(keys.all!, 'anthropic/claude-haiku-4-5-20251001')
    expect(a.status).toBe(200)
    expect(a.body.model).toBe('anthropic/claude-haiku-4-5')
    // Only the shorter pattern matches this one.
    expect((await chat(keys.all!, 'anthropic/claude-opus-4-1-20250805')).body.model).toBe('up/plain')
    // A pattern names no one id: never listed.
    const ids = (await listed(keys.all!)).data.map((m: any) => m.id)
    expect(ids.some((id: string) => id.includes('*'))).toBe(false)
  })

  test('a 3:1 pool over 40 requests: exactly 30 and 10, in smooth round-robin order', async () => {
    const answered: string[] = []
    for (let i = 0; i < 40; i++) {
      const a = await chat(keys.all!, 'team/coder')
      expect(a.status).toBe(200)
      answered.push(a.body.model)
    }
    expect(answered.filter((m) => m === 'up/fast')).toHaveLength(30)
    expect(answered.filter((m) => m === 'up/plain')).toHaveLength(10)
    // Interleaved, never in runs: fast, fast, plain, fast — ten times over.
    const turn = ['up/fast', 'up/fast', 'up/plain', 'up/fast']
    expect(answered).toEqual(Array.from({ length: 40 }, (_, i) => turn[i % 4]!))
  })

  test("a tools request skips the pool's member without tools (not a 400)", async () => {
    for (let i = 0; i < 8; i++) {
      const a = await chat(keys.all!, 'team/coder', { tools: [WEATHER_TOOL] })
      expect(a.status).toBe(200)
      expect(a.body.model).toBe('up/fast')
    }
    // No member serves vision: the first member's refusal, naming what to change.
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }
    const v = await chat(keys.all!, 'team/coder', { messages: [{ role: 'user', content: [image] }] })
    expect(v.status).toBe(400)
    expect(v.body.error.code).toBe('unsupported_feature')
  })

  test("a failing member fails over to the pool's other members", async () => {
    const a = await chat(keys.all!, 'team/sturdy')
    expect(a.status).toBe(200)
    expect(a.body.model).toBe('up/plain')
    expect(a.attempts).toBe('2')
    const rows = await requestLog('all')
    expect(rows[0]).toMatchObject({ model: 'up/broken', answered_by: 'up/plain' })
  })

  test('a hidden alias is callable and unlisted; /v1/models lists the listed ones with their targets', async () => {
    const a = await chat(keys.all!, 'team/hidden')
    expect(a.status).toBe(200)
    expect(a.body.model).toBe('up/plain')
    const data = (await listed(keys.all!)).data
    const ids = data.map((m: any) => m.id)
    expect(ids).not.toContain('team/hidden')
    expect(data.find((m: any) => m.id === 'team/fast')).toMatchObject({
      object: 'model',
      owned_by: 'team',
      description: 'The fast one',
      targets: [{ model: 'up/fast', weight: 1 }],
    })
    expect(data.find((m: any) => m.id === 'team/coder').targets).toEqual([
      { model: 'up/fast', weight: 3 },
      { model: 'up/plain', weight: 1 },
    ])
    // Anthropic's shape too (Claude Code's model picker).
    const anthropic = await listed(keys.all!, { 'anthropic-version': '2023-06-01' })
    expect(anthropic.data.map((m: any) => m.id)).toContain('team/coder')
    expect(anthropic.data.map((m: any) => m.id)).not.toContain('team/hidden')
    const one = await fetch(`${gw.url}/v1/models/team/fast`, { headers: bearer(keys.all!) })
    expect(((await one.json()) as any).targets).toEqual([{ model: 'up/fast', weight: 1 }])
  })

  test('a plan allowing only an alias refuses its target named directly', async () => {
    expect((await chat(keys.aliasonly!, 'team/fast')).body.model).toBe('up/fast')
    const direct = await chat(keys.aliasonly!, 'up/fast')
    expect(direct.status).toBe(403)
    expect(direct.body.error.code).toBe('model_not_in_plan')
    expect((await listed(keys.aliasonly!)).data.map((m: any) => m.id)).toEqual(['team/fast'])
  })

  test('a listed alias is reachable only where allowed; an unlisted one counts as its target', async () => {
    const listedAlias = await chat(keys.direct!, 'team/fast')
    expect(listedAlias.status).toBe(403)
    expect(listedAlias.body.error.code).toBe('model_not_in_plan')
    expect(listedAlias.body.error.message).toContain('team/fast')
    expect((await chat(keys.direct!, 'team/hidden')).body.model).toBe('up/plain')
    // A pattern counts as its target: anthropic/claude-haiku-4-5 is not in this plan.
    expect((await chat(keys.direct!, 'anthropic/claude-haiku-4-5-20251001')).status).toBe(403)
    const ids = (await listed(keys.direct!)).data.map((m: any) => m.id)
    expect(ids).toEqual(['up/fast', 'up/plain'])
  })

  test("a key's model list allows an alias by its id, and not its target", async () => {
    expect((await chat(keys.keyed!, 'team/fast')).body.model).toBe('up/fast')
    const direct = await chat(keys.keyed!, 'up/fast')
    expect(direct.status).toBe(403)
    expect(direct.body.error.code).toBe('model_not_allowed')
    expect((await listed(keys.keyed!)).data.map((m: any) => m.id)).toEqual(['team/fast'])
  })

  test('every surface takes an alias: a stream, Messages, Responses, embeddings', async () => {
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { ...bearer(keys.all!), 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    const stream = await post('/v1/chat/completions', {
      model: 'team/fast',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    })
    const text = await stream.text()
    expect(stream.status).toBe(200)
    expect(text).toContain('"model":"up/fast"')
    expect(text).not.toContain('team/fast')
    const messages = await post(
      '/v1/messages',
      { model: 'team/fast', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] },
      { 'anthropic-version': '2023-06-01' },
    )
    expect(messages.status).toBe(200)
    expect(((await messages.json()) as any).model).toBe('up/fast')
    const responses = await post('/v1/responses', {
      model: 'anthropic/claude-haiku-4-5-20251001',
      input: 'hi',
    })
    expect(responses.status).toBe(200)
    expect(((await responses.json()) as any).model).toBe('anthropic/claude-haiku-4-5')
    const embeddings = await post('/v1/embeddings', { model: 'team/emb', input: 'hi' })
    expect(embeddings.status).toBe(200)
    expect(((await embeddings.json()) as any).model).toBe('up/emb')
  })
})

describe("aliases in the models' views", () => {
  const one = (key: string, id: string, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}/v1/models/${id}`, { headers: { ...bearer(key), ...headers } })

  test('GET /v1/models/{id} answers a dated id a pattern alias takes, naming its target', async () => {
    const r = await one(keys.all!, 'anthropic/claude-haiku-4-5-20251001')
    expect(r.status).toBe(200)
    expect(await r.json()).toMatchObject({
      id: 'anthropic/claude-haiku-4-5-20251001',
      object: 'model',
      owned_by: 'anthropic',
      type: 'chat',
      context_window: 128_000,
      targets: [{ model: 'anthropic/claude-haiku-4-5', weight: 1 }],
    })
    // Anthropic's shape for Claude Code, which looks its model up so.
    const a = await one(keys.all!, 'anthropic/claude-haiku-4-5-20251001', {
      'anthropic-version': '2023-06-01',
    })
    expect(a.status).toBe(200)
    expect(((await a.json()) as any).id).toBe('anthropic/claude-haiku-4-5-20251001')
    // Google's shape, as Gemini CLI and @google/genai look a model up.
    const g = await fetch(`${gw.url}/v1beta/models/anthropic/claude-haiku-4-5-20251001`, {
      headers: { 'x-goog-api-key': keys.all! },
    })
    expect(g.status).toBe(200)
    expect(((await g.json()) as any).name).toBe('models/anthropic/claude-haiku-4-5-20251001')
    // The pattern counts as its target: a plan without anthropic/claude-haiku-4-5 sees no entry.
    const refused = await one(keys.direct!, 'anthropic/claude-haiku-4-5-20251001')
    expect(refused.status).toBe(404)
    expect(((await refused.json()) as any).error.code).toBe('model_not_found')
    // An id no pattern takes is still a 404.
    expect((await one(keys.all!, 'nobody/else')).status).toBe(404)
  })

  test('/admin/v1/models lists every alias with its targets, weights, listed flag and plans', async () => {
    const r = await fetch(`${gw.url}/admin/v1/models`, { headers: bearer(ADMIN_TOKEN) })
    expect(r.status).toBe(200)
    const data = ((await r.json()) as any).data
    const byId = (id: string) => data.find((m: any) => m.id === id)
    expect(byId('up/fast')).toMatchObject({ provider_kind: 'openai', plans: ['all', 'direct'] })
    expect(byId('up/fast').targets).toBeUndefined()
    expect(byId('team/coder')).toMatchObject({
      listed: true,
      pattern: false,
      targets: [
        { model: 'up/fast', weight: 3 },
        { model: 'up/plain', weight: 1 },
      ],
      plans: ['all'],
    })
    // A hidden alias counts as its targets for plans; a listed one only by its id.
    expect(byId('team/hidden')).toMatchObject({ listed: false, plans: ['all', 'direct'] })
    expect(byId('team/fast')).toMatchObject({ listed: true, plans: ['all', 'aliasonly'] })
    expect(byId('anthropic/claude-haiku-4-5-*')).toMatchObject({
      listed: false,
      pattern: true,
      targets: [{ model: 'anthropic/claude-haiku-4-5', weight: 1 }],
    })
  })
})
