/**
 * A 429 whose wait is longer than a client should sleep through (a day's window) says
 * `x-should-retry: false`: the Anthropic SDK otherwise sleeps any `retry-after` out — a day, per
 * retry — and Claude Code, built on it, with it; the OpenAI SDK, which ignores a wait over 60 s,
 * retried at once into the same refusal. A minute's wait stays the clients' to sleep through.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { CLAUDE, runClaude } from '../../support/claude-code.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { AGENT_MODEL } from '../../support/messages-bed.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [{ ...DEMO_PROVIDER, models: [...DEMO_PROVIDER.models, AGENT_MODEL] }],
      plans: {
        daily: { rpm: null, rpd: 1, models: ['*'] },
        minute: { rpm: 1, rpd: null, models: ['*'] },
      },
      default_plan: 'daily',
      limits: { suspension: { count_invalid: false } },
    }),
  })
})
afterAll(() => gw.stop())

/** A fetch that counts the requests a client sends. */
function counting() {
  const sent = { n: 0 }
  const f = (input: string | URL | Request, init?: RequestInit) => {
    sent.n++
    return fetch(input, init)
  }
  return { sent, fetch: f as typeof fetch }
}

/** `p`'s rejection, or a failure if it has not settled within `ms` (a client asleep on retry-after). */
async function rejectedWithin<T>(p: Promise<T>, ms: number): Promise<any> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([p, late]).then(
      () => {
        throw new Error('expected a refusal')
      },
      (e: unknown) => e,
    )
  } finally {
    clearTimeout(timer)
  }
}

async function spentDailyKey(): Promise<string> {
  const { key } = await gw.key(`daily-${crypto.randomUUID()}`, 'daily')
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
  })
  expect(res.status).toBe(200)
  return key
}

test('the day window spent: both SDKs (2 retries allowed) get the 429 at once, after one request', async () => {
  const key = await spentDailyKey()
  const a = counting()
  const anthropic = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 2, fetch: a.fetch })
  const err = await rejectedWithin(
    anthropic.messages.create({
      model: 'demo/agent',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    }),
    10_000,
  )
  expect(err).toBeInstanceOf(Anthropic.RateLimitError)
  expect(Number(err.headers.get('retry-after'))).toBeGreaterThan(3600)
  expect(err.headers.get('x-should-retry')).toBe('false')
  expect(a.sent.n).toBe(1)

  const o = counting()
  const openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 2, fetch: o.fetch })
  const chatErr = await rejectedWithin(
    openai.chat.completions.create({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
    10_000,
  )
  expect(chatErr).toBeInstanceOf(OpenAI.RateLimitError)
  expect(o.sent.n).toBe(1)
})

test("a minute's wait: no x-should-retry, the clients may sleep it out", async () => {
  const { key } = await gw.key('minute', 'minute')
  const ask = () =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
    })
  expect((await ask()).status).toBe(200)
  const refused = await ask()
  expect(refused.status).toBe(429)
  expect(Number(refused.headers.get('retry-after-ms'))).toBeLessThanOrEqual(60_000)
  expect(refused.headers.get('x-should-retry')).toBeNull()
})

test.skipIf(!CLAUDE)(
  'Claude Code with the day window spent ends at once, naming the limit',
  async () => {
    const key = await spentDailyKey()
    const started = Date.now()
    const run = await runClaude(gw.url, key, 'hello', 'demo/agent')
    expect(run.code).not.toBe(0)
    expect(run.stdout + run.stderr).toContain('requests per day (rpd)')
    expect(Date.now() - started).toBeLessThan(30_000)
  },
  120_000,
)
