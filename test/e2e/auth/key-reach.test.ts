/**
 * A key's model list bounds every model a request can reach (DESIGN §11, per-key limits; issue
 * 41). Found: a key allowed only `mock/cheapfail` was answered by its fallback `mock/good`, which
 * the same key is refused directly; `/v1/messages/count_tokens` and `/v1/responses/input_tokens`
 * ignored the list; the reservation was priced at the dearest fallback though the key cannot
 * reach it. One gateway over a fault-injecting OpenAI upstream, real sockets.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { KeyLimits } from '../../../src/store/types.ts'
import { type FaultUpstream, startFaultUpstream } from '../../support/fault-upstream.ts'
import { DEMO_PROVIDER, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

let up: FaultUpstream
let gw: TestGateway
let closed: ReturnType<typeof Bun.serve>
const embedding = { type: 'embedding', context_window: 8192, dimensions: 1536 }

const chatModel = (name: string, more: Record<string, unknown> = {}) => ({
  name,
  context_window: 16_000,
  max_output_tokens: 4096,
  features: ['streaming', 'system_messages'],
  ...more,
})

beforeAll(async () => {
  up = await startFaultUpstream()
  up.script({ model: 'cheapfail' }, 'unavailable')
  // A port that was listening and is closed again: connections are refused, locally.
  closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
  const closedUrl = `http://127.0.0.1:${closed.port}/v1`
  closed.stop(true)
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        { ...DEMO_PROVIDER, models: [...DEMO_PROVIDER.models, { name: 'embed', ...embedding }] },
        {
          prefix: 'gone',
          kind: 'openai',
          base_url: closedUrl,
          api_key: 'sk-x',
          models: [{ name: 'embed', ...embedding, fallbacks: ['demo/embed'] }],
        },
        {
          prefix: 'mock',
          kind: 'openai',
          base_url: `${up.url}/v1`,
          api_key: 'sk-up',
          models: [
            chatModel('cheapfail', { fallbacks: ['mock/good'] }),
            chatModel('good'),
            // $1 in / $1 out per 1M, falling back to $1,000 / $1,000.
            chatModel('cheap', { fallbacks: ['mock/dear'], pricing: { input: 1, output: 1 } }),
            chatModel('dear', { pricing: { input: 1000, output: 1000 } }),
          ],
        },
      ],
      plans: { ...PLANS, open: { rpm: null, rpd: null, models: ['*'] } },
    }),
  })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

const NONE: KeyLimits = {
  rpm: null,
  rpd: null,
  tpm: null,
  tpd: null,
  budgetMicros: null,
  budgetPeriod: null,
  models: null,
}

async function keyWith(account: string, limits: Partial<KeyLimits>): Promise<string> {
  const { id, key } = await gw.key(account, 'open')
  await gw.deps.store.setKeyLimits(id, { ...NONE, ...limits })
  return key
}

const post = (path: string, key: string, body: unknown) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

const ask = (surface: string, model: string, key: string) =>
  surface === 'chat'
    ? post('/v1/chat/completions', key, {
        model,
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 50,
      })
    : surface === 'messages'
      ? post('/v1/messages', key, { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 })
      : post('/v1/responses', key, { model, input: 'hi', max_output_tokens: 50 })

describe("a key's model list", () => {
  test('a fallback outside it is not tried, on every surface (the primary failing is the answer)', async () => {
    const listed = await keyWith('listed', { models: ['mock/cheapfail'] })
    const free = await keyWith('free', {})
    for (const surface of ['chat', 'messages', 'responses']) {
      // Without a list the fallback answers: the route is there.
      const before = up.attempts({ model: 'good' }).length
      const open = await ask(surface, 'mock/cheapfail', free)
      expect(open.status).toBe(200)
      expect(up.attempts({ model: 'good' }).length).toBe(before + 1)
      const r = await ask(surface, 'mock/cheapfail', listed)
      await r.text()
      expect(r.status).toBeGreaterThanOrEqual(500)
      expect(r.headers.get('x-switchyard-attempts')).toBe('1')
      expect(up.attempts({ model: 'good' }).length).toBe(before + 1)
    }
    // The same key is refused the fallback directly.
    expect((await ask('chat', 'mock/good', listed)).status).toBe(403)
  })

  test('embeddings: a fallback outside it is not tried either', async () => {
    const listed = await keyWith('embedder', { models: ['gone/embed'] })
    const free = await keyWith('embedder-free', {})
    const embed = (key: string) => post('/v1/embeddings', key, { model: 'gone/embed', input: 'hi' })
    const open = await embed(free)
    expect(open.status).toBe(200)
    expect(((await open.json()) as any).model).toBe('demo/embed')
    const r = await embed(listed)
    expect(r.status).toBeGreaterThanOrEqual(500)
    expect(((await r.json()) as any).model).toBeUndefined()
  })

  test('the token counters refuse a model outside it: 403 model_not_allowed in the surface shape', async () => {
    const listed = await keyWith('counter', { models: ['mock/cheapfail'] })
    const messages = [{ role: 'user', content: 'hi' }]
    const a = await post('/v1/messages/count_tokens', listed, { model: 'mock/good', messages })
    expect(a.status).toBe(403)
    expect(await a.json()).toMatchObject({ type: 'error', error: { type: 'permission_error' } })
    const b = await post('/v1/responses/input_tokens', listed, { model: 'mock/good', input: 'hi' })
    expect(b.status).toBe(403)
    expect(await b.json()).toMatchObject({ error: { code: 'model_not_allowed', param: 'model' } })
  })

  test('the reservation is priced over the models the key reaches, not an unreachable fallback', async () => {
    // $0.05 a day: 50 output tokens and the input at $1,000 per 1M (mock/dear) reserve more than
    // that; at mock/cheap's $1 they reserve well under a cent.
    const listed = await keyWith('priced', {
      models: ['mock/cheap'],
      budgetMicros: 50_000,
      budgetPeriod: 'day',
    })
    const r = await ask('chat', 'mock/cheap', listed)
    expect(r.status).toBe(200)
    expect(((await r.json()) as any).model).toBe('mock/cheap')
  })
})
