/**
 * A 429's rest is per (key, model), as circuits are (DESIGN §10): OpenAI, Anthropic and Gemini
 * rate-limit each model on its own ("Rate limit reached for gpt-busy …"), so one model's 429 says
 * nothing of the key's other models. A real gateway before the fault upstream: `oa/gpt-busy`
 * answers 429 `retry-after: 600` (past `max_retry_after_s: 2`); the provider's other models keep
 * the key — no fail-over, their retries intact, a session on a two-key pool stays on its key.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type FaultUpstream, startFaultUpstream } from '../../support/fault-upstream.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { beforeEach } from '../../support/hooks.ts'

let gw: TestGateway
let up: FaultUpstream
let key = ''
const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 100_000,
  max_output_tokens: 1000,
  features: ['streaming', 'system_messages', 'tools'],
  ...extra,
})
const retry = { attempts: 2, backoff_ms: 10, max_retry_after_s: 2 }
const circuit = { failures: 100, cooldown_s: 30 }

beforeAll(async () => {
  up = await startFaultUpstream()
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'oa',
          kind: 'openai',
          base_url: `${up.url}/v1`,
          api_key: 'sk-one',
          retry,
          circuit,
          models: [
            model('gpt-busy'),
            model('gpt-good', { fallbacks: ['bk/gpt-backup'] }),
            model('gpt-plain'),
            // Another name for the busy model upstream: its rate limit is that model's.
            model('gpt-busy-twin', { upstream_name: 'gpt-busy', fallbacks: ['bk/gpt-backup'] }),
          ],
        },
        {
          prefix: 'duo',
          kind: 'openai',
          base_url: `${up.url}/v1`,
          keys: [{ api_key: 'sk-k1' }, { api_key: 'sk-k2' }],
          retry,
          circuit,
          models: [model('gpt-busy'), model('gpt-good')],
        },
        {
          prefix: 'bk',
          kind: 'openai',
          base_url: `${up.url}/v1`,
          api_key: 'sk-backup',
          models: [model('gpt-backup')],
        },
      ],
      plans: { p: { rpm: null, rpd: null, models: ['*'] } },
      default_plan: 'p',
      limits: { suspension: { enabled: false } },
    }),
  })
  key = (await gw.key('a', 'p')).key
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})
beforeEach(() => up.clear())

/** One chat request: its status, the model that answered, and the (model@key) attempts the upstream saw. */
async function chat(id: string, session?: string) {
  const before = up.attempts().length
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: id,
      messages: [{ role: 'user', content: 'hi' }],
      ...(session ? { prompt_cache_key: session } : {}),
    }),
  })
  const body = (await res.json()) as { model?: string }
  const seen = up
    .attempts()
    .slice(before)
    .map((a) => `${a.model}@${a.key}`)
  return { status: res.status, model: body.model ?? null, retryAfter: res.headers.get('retry-after'), seen }
}

describe("a 429 rests the key for that model only (one key, the 429's retry-after past max_retry_after_s)", () => {
  test("the busy model answers the upstream's 429; another model of the key answers on it, 3 of 3, not by its fallback", async () => {
    up.script({ model: 'gpt-busy' }, { fault: 'rate_limited', retryAfter: '600' })
    const busy = await chat('oa/gpt-busy')
    expect([busy.status, busy.retryAfter, busy.seen]).toEqual([429, '600', ['gpt-busy@sk-one']])
    for (let i = 0; i < 3; i++) {
      const good = await chat('oa/gpt-good')
      expect([good.status, good.model, good.seen]).toEqual([200, 'oa/gpt-good', ['gpt-good@sk-one']])
    }
  })

  test('a model with no fallback keeps its retries while another model rests the key', async () => {
    up.script({ model: 'gpt-busy' }, { fault: 'rate_limited', retryAfter: '600' })
    expect((await chat('oa/gpt-busy')).status).toBe(429)
    up.script({ model: 'gpt-plain' }, 'server_error', 'ok')
    const plain = await chat('oa/gpt-plain')
    expect([plain.status, plain.model, plain.seen]).toEqual([
      200,
      'oa/gpt-plain',
      ['gpt-plain@sk-one', 'gpt-plain@sk-one'],
    ])
  })
})

test("a model configured under another name shares the upstream model's rest: its fallback at once", async () => {
  up.script({ model: 'gpt-busy' }, { fault: 'rate_limited', retryAfter: '600' })
  expect((await chat('oa/gpt-busy')).status).toBe(429)
  const twin = await chat('oa/gpt-busy-twin')
  expect([twin.status, twin.model, twin.seen]).toEqual([200, 'bk/gpt-backup', ['gpt-backup@sk-backup']])
})

test("a session on a two-key pool keeps its key while another model's 429 rests that key", async () => {
  const home = (await chat('duo/gpt-good', 'sess-1')).seen[0]!.split('@')[1]!
  const other = home === 'sk-k1' ? 'sk-k2' : 'sk-k1'
  up.script({ model: 'gpt-busy', key: home }, { fault: 'rate_limited', retryAfter: '600' })
  // Requests without a session take the keys in turn: within two, one meets the 429 on the
  // session's key and is answered on the other at once.
  let busy = await chat('duo/gpt-busy')
  if (busy.seen[0] !== `gpt-busy@${home}`) busy = await chat('duo/gpt-busy')
  expect([busy.status, busy.seen]).toEqual([200, [`gpt-busy@${home}`, `gpt-busy@${other}`]])
  for (let i = 0; i < 3; i++)
    expect((await chat('duo/gpt-good', 'sess-1')).seen).toEqual([`gpt-good@${home}`])
})
