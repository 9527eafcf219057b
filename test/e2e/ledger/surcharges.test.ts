/**
 * Spend the price table cannot see (DESIGN §11; issue 41): under a money limit, a parameter that
 * makes the provider bill more than tokens × price is priced by the model's `pricing`
 * (`service_tier`, `per_call`) or refused with 400 `unsupported_value` naming the field, before
 * anything reaches the upstream. Found: `service_tier: "priority"`, `web_search_options`,
 * `prediction`, hosted tools billed per call and audio output all reached the upstream under a
 * budget, charged at the standard token prices. Without a money limit they pass as before.
 * One gateway over a fault-injecting upstream (OpenAI chat, Responses, Anthropic wires); the
 * per-call reservation on every storage backend.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { backends } from '../../support/backends.ts'
import { type FaultUpstream, startFaultUpstream } from '../../support/fault-upstream.ts'
import { DEMO_PROVIDER, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

let up: FaultUpstream
let gw: TestGateway

const model = (name: string, pricing?: unknown) => ({
  name,
  context_window: 16_000,
  max_output_tokens: 4096,
  features: ['streaming', 'system_messages', 'tools'],
  ...(pricing ? { pricing } : {}),
})
/** Standard prices only: no tier, no per-call price. */
const PLAIN = { input: 1, output: 2 }
/** USD per 1M tokens: priority at 100× the standard; web search $0.01 a call. */
const TIERED = {
  input: 1,
  output: 2,
  service_tier: { priority: { input: 100, output: 200 } },
  per_call: { web_search: 0.01, file_search: 0.0025 },
}
const models = () => [model('plain', PLAIN), model('tiered', TIERED)]

function doc(upstream: FaultUpstream, plans: Record<string, unknown>) {
  return testConfigDoc({
    providers: [
      DEMO_PROVIDER,
      { prefix: 'oa', kind: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-up', models: models() },
      {
        prefix: 'oar',
        kind: 'openai',
        wire: 'responses',
        base_url: `${upstream.url}/v1`,
        api_key: 'sk-up',
        models: models(),
      },
      { prefix: 'ant', kind: 'anthropic', base_url: upstream.url, api_key: 'sk-up', models: models() },
    ],
    plans: { ...PLANS, ...plans },
  })
}

beforeAll(async () => {
  up = await startFaultUpstream()
  gw = await startGateway({
    doc: doc(up, {
      budgeted: { rpm: null, rpd: null, budget: { usd: 5, period: 'day' }, models: ['*'] },
      open: { rpm: null, rpd: null, models: ['*'] },
    }),
  })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

const post = (url: string, path: string, key: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

const chat = (key: string, m: string, more: Record<string, unknown>) =>
  post(gw.url, '/v1/chat/completions', key, {
    model: m,
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 100,
    ...more,
  })

let accounts = 0
const keyOn = async (plan: string) => (await gw.key(`acct${++accounts}`, plan)).key

/** The account's settled spend, micro-dollars. */
async function spent(key: string): Promise<number> {
  await gw.deps.recorder.flush()
  const u = (await (
    await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as any
  return Math.round(u.budget.spent_usd * 1e6)
}

describe('under a money limit', () => {
  test('chat: service_tier, web_search_options, prediction, audio on an unpriced model → 400 naming the field, nothing sent', async () => {
    const key = await keyOn('budgeted')
    const before = up.attempts().length
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ service_tier: 'priority' }, 'service_tier'],
      [{ service_tier: 'scale' }, 'service_tier'],
      // OpenAI's spelling of priority ("Fast mode": served and billed as priority).
      [{ service_tier: 'fast' }, 'service_tier'],
      [{ web_search_options: {} }, 'web_search_options'],
      [{ prediction: { type: 'content', content: 'hello there' } }, 'prediction'],
      [{ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }, 'modalities'],
    ]
    for (const [more, param] of cases) {
      const r = await chat(key, 'oa/plain', more)
      expect(r.status).toBe(400)
      const e = ((await r.json()) as any).error
      expect(e).toMatchObject({ code: 'unsupported_value', param })
      expect(e.message).toContain('money limit')
    }
    expect(up.attempts().length).toBe(before)
    // flex bills at most the standard prices: charged at those.
    expect((await chat(key, 'oa/plain', { service_tier: 'flex' })).status).toBe(200)
    // A translating upstream does not receive service_tier (it is dropped and named): nothing to price.
    const ant = await chat(key, 'ant/plain', { service_tier: 'priority' })
    expect(ant.status).toBe(200)
    expect(ant.headers.get('x-switchyard-dropped-params')).toContain('service_tier')
    expect(up.attempts({ model: 'plain' }).at(-1)!.body.service_tier).toBeUndefined()
  })

  test('chat: a priced tier is reserved and charged at its prices; a priced web search per call', async () => {
    const key = await keyOn('budgeted')
    const r = await chat(key, 'oa/tiered', { service_tier: 'priority' })
    expect(r.status).toBe(200)
    const u = ((await r.json()) as any).usage
    expect(up.attempts({ model: 'tiered' }).at(-1)!.body.service_tier).toBe('priority')
    // USD per 1M tokens = micro-dollars per token: 100 in, 200 out.
    const tier = u.prompt_tokens * 100 + u.completion_tokens * 200
    expect(await spent(key)).toBe(tier)
    // "fast" is priority by another name: priority's prices.
    const f = await chat(key, 'oa/tiered', { service_tier: 'fast' })
    expect(f.status).toBe(200)
    const w = ((await f.json()) as any).usage
    const fast = w.prompt_tokens * 100 + w.completion_tokens * 200
    expect(await spent(key)).toBe(tier + fast)
    const s = await chat(key, 'oa/tiered', { web_search_options: {} })
    expect(s.status).toBe(200)
    const v = ((await s.json()) as any).usage
    expect(await spent(key)).toBe(tier + fast + v.prompt_tokens * 1 + v.completion_tokens * 2 + 10_000)
  })

  test('Responses: hosted tools billed per call need a price and a bound (max_tool_calls); others refused', async () => {
    const key = await keyOn('budgeted')
    const ask = (m: string, more: Record<string, unknown>) =>
      post(gw.url, '/v1/responses', key, { model: m, input: 'hi', max_output_tokens: 100, ...more })
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['oar/tiered', { tools: [{ type: 'web_search' }] }, 'tools[0]'], // unbounded
      ['oar/plain', { tools: [{ type: 'web_search' }], max_tool_calls: 2 }, 'tools[0]'], // unpriced
      [
        'oar/tiered',
        { tools: [{ type: 'function', name: 'f', parameters: {} }, { type: 'image_generation' }] },
        'tools[1]',
      ],
      [
        'oar/tiered',
        { tools: [{ type: 'code_interpreter', container: { type: 'auto' } }], max_tool_calls: 1 },
        'tools[0]',
      ],
      ['oar/plain', { service_tier: 'priority' }, 'service_tier'],
      ['oar/plain', { service_tier: 'fast' }, 'service_tier'],
      // A Responses-only tier the pricing has no place for, and a tier the gateway does not know.
      ['oar/tiered', { service_tier: 'ultrafast' }, 'service_tier'],
      ['oar/tiered', { service_tier: 'turbo' }, 'service_tier'],
    ]
    const before = up.attempts().length
    for (const [m, more, param] of refusals) {
      const r = await ask(m, more)
      expect(r.status).toBe(400)
      expect(((await r.json()) as any).error).toMatchObject({ code: 'unsupported_value', param })
    }
    expect(up.attempts().length).toBe(before)
    const ok = await ask('oar/tiered', { tools: [{ type: 'web_search' }], max_tool_calls: 2 })
    expect(ok.status).toBe(200)
    const u = ((await ok.json()) as any).usage
    expect(up.attempts({ model: 'tiered' }).at(-1)!.body.tools).toEqual([{ type: 'web_search' }])
    // Two web searches reserved, and charged (the calls made are not counted from the answer).
    expect(await spent(key)).toBe(u.input_tokens * 1 + u.output_tokens * 2 + 20_000)
  })

  test("Messages: Anthropic's web search needs a per-call price and max_uses; code execution is refused", async () => {
    const key = await keyOn('budgeted')
    const ask = (m: string, tool: Record<string, unknown>) =>
      post(gw.url, '/v1/messages', key, {
        model: m,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [tool],
      })
    const search = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }
    for (const [m, tool] of [
      ['ant/plain', search],
      ['ant/tiered', { type: 'web_search_20250305', name: 'web_search' }],
      ['ant/tiered', { type: 'code_execution_20250825', name: 'code_execution' }],
    ] as const) {
      const r = await ask(m, tool)
      expect(r.status).toBe(400)
      const body = (await r.json()) as any
      expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
      expect(body.error.message).toContain('tools[0]')
    }
    const ok = await ask('ant/tiered', search)
    expect(ok.status).toBe(200)
    const u = ((await ok.json()) as any).usage
    expect(await spent(key)).toBe(u.input_tokens * 1 + u.output_tokens * 2 + 30_000)
  })
})

test('without a money limit every surcharge passes as before', async () => {
  const key = await keyOn('open')
  for (const more of [
    { service_tier: 'priority' },
    { web_search_options: {} },
    { prediction: { type: 'content', content: 'x' } },
  ]) {
    const r = await chat(key, 'oa/plain', more)
    expect(r.status).toBe(200)
    await r.text()
  }
  const r = await post(gw.url, '/v1/responses', key, {
    model: 'oar/plain',
    input: 'hi',
    tools: [{ type: 'web_search' }],
  })
  expect(r.status).toBe(200)
})

test('/v1/models shows the tier and per-call prices', async () => {
  const key = await keyOn('open')
  const body = (await (
    await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as any
  const tiered = body.data.find((m: any) => m.id === 'oa/tiered')
  expect(tiered.pricing.service_tier).toEqual({ priority: { input: 100, output: 200, cached_input: 100 } })
  expect(tiered.pricing.per_call).toEqual({ web_search: 0.01, file_search: 0.0025 })
  expect(body.data.find((m: any) => m.id === 'oa/plain').pricing.per_call).toBeUndefined()
})

// The per-call charge rides on the reservation's input price: every backend reserves it.
for (const backend of backends('surcharges.test.ts')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test('per-call tools are reserved: ten $0.01 searches do not fit a $0.05 budget, two do', async () => {
      const g = await startGateway({
        doc: doc(up, {
          tight: { rpm: null, rpd: null, budget: { usd: 0.05, period: 'day' }, models: ['*'] },
        }),
        backend: await backend.fresh(),
      })
      try {
        const { key } = await g.key('tight', 'tight')
        const ask = (calls: number) =>
          post(g.url, '/v1/responses', key, {
            model: 'oar/tiered',
            input: 'hi',
            max_output_tokens: 100,
            tools: [{ type: 'web_search' }],
            max_tool_calls: calls,
          })
        const before = up.attempts().length
        const ten = await ask(10)
        expect(ten.status).toBe(402)
        expect(((await ten.json()) as any).error.code).toBe('budget_exceeded')
        expect(up.attempts().length).toBe(before)
        const two = await ask(2)
        expect(two.status).toBe(200)
      } finally {
        await g.stop()
      }
    })
  })
}
