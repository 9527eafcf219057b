/**
 * A model whose entry does not list `streaming` (DESIGN §3: a model supports exactly the features
 * listed) under a token or money limit (§11), behind a plain OpenAI-compatible server that always
 * answers `application/json` (audit65a finding 1). It is never asked for a stream: chat, Messages
 * and Responses get its JSON answer in one attempt, as an account without limits does, and the
 * (key, model) circuit stays shut for everyone. Its answer cannot be cut, so it holds the whole
 * cap from admission (the client's, else the model's maximum): answers side by side never bill past
 * the limit, and what fits is admitted. An upstream that ignores `stream` for a model that lists it
 * is read as the JSON answer it sent. The upstream bills like the real one (billing-upstream.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

const MODEL_MAX = 16_000
/** USD per 1M tokens: a token costs that many micro-dollars. */
const PRICE = { input: 1, output: 4 }
const TEXT = 'count these words for the billing upstream which bills one token for each word'
const open = { rpm: null, rpd: null, models: ['*'] }
/** The error `plain/err` answers in a 200: the request's own fault, not the upstream failing. */
const OVERFLOW = {
  message: "This model's maximum context length is 8192 tokens",
  type: 'invalid_request_error',
  code: 'context_length_exceeded',
}

/** Completions malformed past their choices array (review65 finding 2), by the model that answers them. */
const MALFORMED: Record<string, unknown> = {
  'null-choice': { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [null] },
  'empty-call': {
    id: 'x',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: null, tool_calls: [{}] },
        finish_reason: 'tool_calls',
      },
    ],
  },
  'string-calls': {
    id: 'x',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: null, tool_calls: 'zz' },
        finish_reason: 'tool_calls',
      },
    ],
  },
}

/** One model a case (its circuit opens on the failures: retried, three in a row), named `shape.plan.surface`. */
const MALFORMED_CASES = Object.keys(MALFORMED).flatMap((shape) =>
  ['t', 'dev'].flatMap((plan) =>
    (['chat', 'messages'] as const).map((surface) => ({
      name: `${shape}.${plan}.${surface}`,
      plan,
      surface,
    })),
  ),
)

let gw: TestGateway
let up: BillingUpstream

beforeAll(async () => {
  up = await startBillingUpstream({
    jsonOnly: true,
    jsonDelayMs: 200,
    answerFor: (model) => (model === 'long' ? 9_000 : 120),
    defaultMax: MODEL_MAX,
    fault: (model) =>
      model === 'err'
        ? { error200: OVERFLOW }
        : model.split('.')[0]! in MALFORMED
          ? { json200: MALFORMED[model.split('.')[0]!] }
          : undefined,
  })
  const model = (name: string, features: string[]) => ({
    name,
    context_window: 128_000,
    max_output_tokens: MODEL_MAX,
    features,
    pricing: PRICE,
  })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      // Settled within 20 ms of an answer, not the default 200: most tests wait for the settlement.
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'plain',
          kind: 'openai',
          base_url: up.url,
          api_key: 'sk-upstream',
          // The audit's settings: failures retried, and three in a row open the circuit.
          retry: { attempts: 2, backoff_ms: 1, max_backoff_ms: 1 },
          circuit: { failures: 3, cooldown_s: 30 },
          models: [
            model('short', ['system_messages']),
            model('long', ['system_messages']),
            model('says', ['streaming', 'system_messages']),
            model('err', ['streaming', 'system_messages']),
            ...MALFORMED_CASES.map(({ name }) => model(name, ['streaming', 'system_messages'])),
          ],
        },
      ],
      plans: {
        dev: open,
        t: { ...open, tpm: 200_000 },
        held: { ...open, tpm: 30_000 },
        tight: { ...open, tpm: 20_000 },
        money: { ...open, budget: { usd: 0.05, period: 'month' } },
      },
      default_plan: 'dev',
    },
  })
}, 30_000)

afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

type Surface = 'chat' | 'responses' | 'messages'

/** A request on `surface`; `max` is the client's output cap (Messages requires one). */
function ask(
  surface: Surface,
  key: string,
  model: string,
  max: number | null,
  stream = false,
): Promise<Response> {
  const headers = { ...bearer(key), 'content-type': 'application/json' }
  const cap = max === null ? {} : surface === 'responses' ? { max_output_tokens: max } : { max_tokens: max }
  const body =
    surface === 'responses'
      ? { model, input: TEXT, stream, ...cap }
      : { model, messages: [{ role: 'user', content: TEXT }], stream, ...cap }
  const path = { chat: 'chat/completions', responses: 'responses', messages: 'messages' }[surface]
  return fetch(`${gw.url}/v1/${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
}

/** The account's tokens in the current minute once `done` holds (the usage flush settles ended requests). */
async function settled(key: string, done: (u: any) => boolean): Promise<any> {
  const deadline = performance.now() + 20_000
  for (;;) {
    const u = await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()
    if (done(u) || performance.now() > deadline) return u
    await Bun.sleep(25)
  }
}

/** What the upstream billed from bill `from` on: tokens, and micro-dollars at PRICE. */
function billedSince(from: number) {
  const bills = up.bills.slice(from)
  const tokens = bills.reduce((s, b) => s + b.input + b.output, 0)
  const micros = bills.reduce((s, b) => s + b.input * PRICE.input + b.output * PRICE.output, 0)
  return { bills, tokens, micros }
}

describe('a model without streaming under a limit', () => {
  for (const surface of ['chat', 'responses', 'messages'] as const) {
    test(`${surface}: asked as JSON in one attempt, the whole cap held and sent, settled to the upstream's bill`, async () => {
      const { key } = await gw.key(`held-${surface}`, 'held')
      const from = up.bills.length
      // Messages requires a cap; the others go without one and are sent the model's maximum.
      const max = surface === 'messages' ? MODEL_MAX : null
      // Two at once on TPM 30,000: the first admitted holds the whole cap up to half the window
      // (15,000 of the model's 16,000: output-growth.ts unseenCeiling), so the second is sent what
      // that leaves, under it. A growing hold (a first slice of 4,096) would leave the second the
      // whole cap too. (Messages' cap is the client's: held whole either way.)
      const [a, b] = await Promise.all([
        ask(surface, key, 'plain/short', max),
        ask(surface, key, 'plain/short', max),
      ])
      for (const res of [a!, b!]) {
        const text = await res.text()
        expect(res.status, text).toBe(200)
        expect(res.headers.get('x-switchyard-attempts')).toBe('1')
      }
      const { bills, tokens } = billedSince(from)
      expect(bills.map((b) => b.stream)).toEqual([false, false])
      const caps = bills.map((b) => b.cap!).sort((x, y) => x - y)
      const whole = max ?? Math.min(MODEL_MAX, 30_000 / 2)
      expect(caps[1]).toBe(whole)
      // What the first's hold leaves, less the second's input (as the gateway bounds it, above the
      // upstream's count).
      expect(caps[0]).toBeLessThanOrEqual(30_000 - whole - bills[0]!.input - bills[1]!.input)
      const u = await settled(key, (u) => u.usage?.current_minute?.tokens === tokens)
      expect(u.usage.current_minute.tokens).toBe(tokens)
    })
  }

  test('a stream asked of it is refused as without a limit (400 unsupported_feature); the unlimited account is answered alike', async () => {
    const t = await gw.key('t-stream', 't')
    const dev = await gw.key('dev-stream', 'dev')
    for (const key of [t.key, dev.key]) {
      const res = await ask('chat', key, 'plain/short', 100, true)
      expect(res.status).toBe(400)
      expect(((await res.json()) as any).error.code).toBe('unsupported_feature')
    }
    // The limited account's requests opened no circuit: the unlimited one is answered.
    for (let i = 0; i < 3; i++) expect((await ask('chat', t.key, 'plain/short', 100)).status).toBe(200)
    const res = await ask('messages', dev.key, 'plain/short', 100)
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-attempts')).toBe('1')
  })

  test('three uncapped answers at once on TPM 20,000: the upstream never bills past the limit, and what fits after is admitted', async () => {
    const { key } = await gw.key('tight', 'tight')
    const from = up.bills.length
    const answers = await Promise.all([0, 1, 2].map(() => ask('chat', key, 'plain/long', null)))
    const statuses = answers.map((r) => r.status).sort()
    for (const r of answers) await r.text()
    expect(statuses[0]).toBe(200)
    for (const s of statuses) expect([200, 429]).toContain(s)
    const { tokens } = billedSince(from)
    expect(tokens).toBeLessThanOrEqual(20_000)
    await settled(key, (u) => u.usage?.current_minute?.tokens === tokens)
    // Room is left (20,000 less what was billed): a request that fits it is admitted.
    const fits = await ask('chat', key, 'plain/short', Math.min(1_000, 20_000 - tokens - 200))
    expect(fits.status, await fits.text()).toBe(200)
    expect(billedSince(from).tokens).toBeLessThanOrEqual(20_000)
  })

  test('three uncapped answers at once on a $0.05 budget: the upstream never bills past it, and the budget is used', async () => {
    const { key } = await gw.key('money', 'money')
    const from = up.bills.length
    const answers = await Promise.all(
      (['chat', 'responses', 'chat'] as const).map((s) => ask(s, key, 'plain/long', null)),
    )
    const statuses = answers.map((r) => r.status).sort()
    for (const r of answers) await r.text()
    expect(statuses[0]).toBe(200)
    for (const s of statuses) expect([200, 402]).toContain(s)
    const { micros } = billedSince(from)
    expect(micros).toBeLessThanOrEqual(50_000)
    const u = await settled(key, (u) => Math.round((u.budget?.spent_usd ?? 0) * 1e6) === micros)
    expect(Math.round(u.budget.spent_usd * 1e6)).toBe(micros)
    // Each holds at most half the budget (output-growth.ts unseenCeiling), so two run side by side
    // and between them spend most of it (9,000-token answers at $4/M, cut at their caps).
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2)
    expect(micros).toBeGreaterThanOrEqual(37_500)
  })
})

describe('an upstream that ignores stream for a model that lists it', () => {
  for (const surface of ['chat', 'responses', 'messages'] as const)
    test(`${surface} JSON under a limit: its JSON answer is the answer, in one attempt, settled from its usage`, async () => {
      const { key } = await gw.key(`t-says-${surface}`, 't')
      const from = up.bills.length
      const res = await ask(surface, key, 'plain/says', 300)
      const body = (await res.json()) as any
      expect(res.status, JSON.stringify(body)).toBe(200)
      expect(res.headers.get('x-switchyard-attempts')).toBe('1')
      expect(body.model).toBe('plain/says')
      const text =
        surface === 'chat'
          ? body.choices[0].message.content
          : surface === 'messages'
            ? body.content[0].text
            : body.output.at(-1).content[0].text
      expect(text.split(' ').length).toBe(120)
      const { tokens } = billedSince(from)
      const u = await settled(key, (u) => u.usage?.current_minute?.tokens === tokens)
      expect(u.usage.current_minute.tokens).toBe(tokens)
    })

  for (const plan of ['t', 'dev'])
    for (const surface of ['chat', 'responses', 'messages'] as const)
      test(`${surface} stream on ${plan}: the JSON answer relayed as the events it stands for, in one attempt`, async () => {
        const { key } = await gw.key(`${plan}-says-stream-${surface}`, plan)
        const res = await ask(surface, key, 'plain/says', 300, true)
        const text = await res.text()
        expect(res.status, text).toBe(200)
        expect(res.headers.get('content-type')).toContain('text/event-stream')
        expect(res.headers.get('x-switchyard-attempts')).toBe('1')
        const words = text.match(/w w w/g)?.length ?? 0
        expect(words).toBeGreaterThan(0)
        const end = { chat: 'data: [DONE]', responses: 'response.completed', messages: 'message_stop' }[
          surface
        ]
        expect(text).toContain(end)
      })

  test('an error in a 200 is the failure it names (context_length_exceeded: not retried), on every surface and plan', async () => {
    for (const plan of ['t', 'dev']) {
      const { key } = await gw.key(`${plan}-err`, plan)
      for (const surface of ['chat', 'responses', 'messages'] as const)
        for (const stream of [false, true]) {
          const res = await ask(surface, key, 'plain/err', 300, stream)
          const text = await res.text()
          expect(res.status, `${plan} ${surface} ${stream}: ${text}`).toBe(502)
          expect(text).toContain('maximum context length')
          expect(res.headers.get('x-switchyard-attempts')).toBe('1')
        }
    }
    // The request's own fault opened no circuit: the model still answers everyone.
    const dev = await gw.key('dev-after-err', 'dev')
    expect((await ask('chat', dev.key, 'plain/says', 50)).status).toBe(200)
  })

  test("a malformed JSON answer to a stream is the upstream's fault (502 upstream_invalid_response), on chat and Messages, every plan", async () => {
    const keys = {
      t: (await gw.key('t-malformed', 't')).key,
      dev: (await gw.key('dev-malformed', 'dev')).key,
    }
    for (const { name, plan, surface } of MALFORMED_CASES) {
      const res = await ask(surface, keys[plan as 't' | 'dev'], `plain/${name}`, 300, true)
      const text = await res.text()
      expect(res.status, `${name}: ${text}`).toBe(502)
      expect(text).toContain('sent an invalid response')
    }
  })
})
