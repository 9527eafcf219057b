/**
 * Gemini says how long to wait in its error body (`RetryInfo.retryDelay`), not in a `retry-after`
 * header. The attempt loop honours it as it does a header (DESIGN §10): a delay past
 * `max_retry_after_s` fails over at once, the key resting that long; a short one is waited out
 * before the same key is asked again — never a quick backoff into a key that said how long to wait.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { DEMO_PROVIDER, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { beforeEach } from '../../support/hooks.ts'

let gw: TestGateway
let key: string
let up: ReturnType<typeof Bun.serve>
/** The `retryDelay` the upstream answers with; an empty string: it answers. */
let delay = '30s'
let calls: number[] = []

const exhausted = (retryDelay: string) =>
  Response.json(
    {
      error: {
        code: 429,
        message: 'You exceeded your current quota, please check your plan and billing details.',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }],
      },
    },
    { status: 429 },
  )

const answer = () =>
  Response.json({
    candidates: [{ content: { role: 'model', parts: [{ text: 'Hello.' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
    modelVersion: 'gemini-2.5-flash',
  })

beforeAll(async () => {
  up = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch() {
      calls.push(performance.now())
      // Rate limited once, then (for the short delay) the answer.
      if (delay && calls.length === 1) return exhausted(delay)
      return delay === '30s' ? exhausted(delay) : answer()
    },
  })
  const model = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    context_window: 8192,
    max_output_tokens: 1024,
    features: ['streaming'],
    ...extra,
  })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        DEMO_PROVIDER,
        {
          prefix: 'gem',
          kind: 'gemini',
          base_url: `http://127.0.0.1:${up.port}`,
          api_key: 'AIza-test-key-0123456789abcdefghijk',
          retry: { attempts: 2, backoff_ms: 20, max_backoff_ms: 40, max_retry_after_s: 10 },
          models: [model('flash', { fallbacks: ['demo/echo'] })],
        },
        // A provider of its own, so its key does not rest from the test before.
        {
          prefix: 'gem2',
          kind: 'gemini',
          base_url: `http://127.0.0.1:${up.port}`,
          api_key: 'AIza-test-key-0123456789abcdefghijk',
          retry: { attempts: 2, backoff_ms: 20, max_backoff_ms: 40, max_retry_after_s: 10 },
          models: [model('solo')],
        },
      ],
      plans: { ...PLANS, all: { rpm: null, rpd: null, models: ['*'] } },
    }),
  })
  key = (await gw.key('gemini-user', 'all')).key
})
afterAll(async () => {
  await gw.stop()
  up.stop(true)
})
beforeEach(() => {
  calls = []
})

const chat = (model: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  })

test('a retryDelay past max_retry_after_s: the fallback at once, and the key rests for it', async () => {
  delay = '30s'
  const res = await chat('gem/flash')
  expect(res.status).toBe(200)
  expect(((await res.json()) as any).model).toBe('demo/echo')
  expect(calls).toHaveLength(1)
  // The next request does not ask the resting key again.
  expect(((await (await chat('gem/flash')).json()) as any).model).toBe('demo/echo')
  expect(calls).toHaveLength(1)
})

test('a short retryDelay is waited out, then the same model answers', async () => {
  delay = '1s'
  const res = await chat('gem2/solo')
  expect(res.status).toBe(200)
  expect(((await res.json()) as any).model).toBe('gem2/solo')
  expect(calls).toHaveLength(2)
  expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(950)
})
