/**
 * `:batchEmbedContents` passed through to a gemini provider: Gemini takes at most 100 requests a
 * batch, the gateway's surface up to 2,048 (as on every other route). A longer batch went up whole
 * and Gemini refused it; now it goes in parts of 100, one after another, and the client gets one
 * answer, its embeddings in request order — as `/v1/embeddings` on a gemini provider splits.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type FakeUpstream, startFakeGeminiEmbeddings } from '../../../support/fake-gemini-embeddings.ts'
import { unitVector } from '../../../support/fake-openai-embeddings.ts'
import {
  ADMIN_TOKEN,
  bearer,
  startGateway,
  type TestGateway,
  testConfigDoc,
} from '../../../support/gateway.ts'

const EMBED = {
  name: 'embed',
  upstream_name: 'gemini-embedding-001',
  type: 'embedding',
  context_window: 2048,
  tier: 'free',
}
let up: FakeUpstream<'embeddings'>
let flaky: ReturnType<typeof Bun.serve>
/** The texts that begin each batch `flaky` is sent, and the one it refuses once (then forgets). */
const flakySent: string[] = []
let refuseOnce: string | null = null
let gw: TestGateway
let key: string
beforeAll(async () => {
  up = startFakeGeminiEmbeddings({ apiKey: 'AIza-up' })
  // In front of the fake: refuses the batch beginning with `refuseOnce` once, as Gemini says it is
  // overloaded (503 UNAVAILABLE, not billed), and passes every other on.
  flaky = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const text = await req.text()
      const first = JSON.parse(text).requests[0].content.parts[0].text as string
      flakySent.push(first)
      if (first === refuseOnce) {
        refuseOnce = null
        const error = {
          code: 503,
          message: 'The model is overloaded. Please try again later.',
          status: 'UNAVAILABLE',
        }
        return Response.json({ error }, { status: 503 })
      }
      const url = new URL(req.url)
      return fetch(`${up.url}${url.pathname}`, { method: 'POST', headers: req.headers, body: text })
    },
  })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'gem',
          kind: 'gemini',
          base_url: up.url,
          api_key: 'AIza-up',
          models: [EMBED],
        },
        {
          prefix: 'flaky',
          kind: 'gemini',
          base_url: `http://127.0.0.1:${flaky.port}/v1beta`,
          api_key: 'AIza-up',
          retry: { attempts: 2, backoff_ms: 1, max_backoff_ms: 1 },
          models: [EMBED],
        },
      ],
    }),
  })
  key = (await gw.key('batch', 'pro')).key
})
afterAll(async () => {
  await gw.stop()
  flaky.stop(true)
  await up.stop()
})

const batch = (n: number) => ({
  requests: Array.from({ length: n }, (_, i) => ({
    model: 'models/gem/embed',
    content: { parts: [{ text: `text ${i}` }] },
    taskType: 'RETRIEVAL_DOCUMENT',
    outputDimensionality: 4,
  })),
})

const post = (body: unknown) =>
  fetch(`${gw.url}/v1beta/models/gem/embed:batchEmbedContents`, {
    method: 'POST',
    headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

test('250 requests → three upstream batches of 100, 100 and 50; one answer, in order', async () => {
  const before = up.requests().length
  const res = await post(batch(250))
  expect(res.status).toBe(200)
  const { embeddings } = (await res.json()) as { embeddings: Array<{ values: number[] }> }
  expect(embeddings).toHaveLength(250)
  // Each the vector of its own text (the fake's: the full one cut to 4 values).
  for (const i of [0, 99, 100, 199, 200, 249])
    expect(embeddings[i]!.values).toEqual(Array.from(unitVector(`text ${i}`, 3072).subarray(0, 4)))
  const sent = up.requests().slice(before)
  expect(sent.map((r) => r.body.requests.length)).toEqual([100, 100, 50])
  expect(sent[1]!.body.requests[0].content.parts[0].text).toBe('text 100')
  // Passed through as sent: each request's own fields kept, its model the provider's name.
  expect(sent[2]!.body.requests[49]).toMatchObject({
    model: 'models/gemini-embedding-001',
    taskType: 'RETRIEVAL_DOCUMENT',
  })
})

test('100 requests or fewer → one upstream call, the answer as it came', async () => {
  const before = up.requests().length
  const res = await post(batch(100))
  expect(res.status).toBe(200)
  expect(((await res.json()) as any).embeddings).toHaveLength(100)
  expect(up.requests().length - before).toBe(1)
})

/** The request log's row of the account's newest request. */
async function logged(account: string) {
  const deadline = performance.now() + 10_000
  for (;;) {
    const log = (await (
      await fetch(`${gw.url}/admin/v1/requests?account=${account}`, { headers: bearer(ADMIN_TOKEN) })
    ).json()) as any
    if (log.data.length || performance.now() > deadline) return log.data[0]
    await Bun.sleep(25)
  }
}

/**
 * A part the upstream refused (503, not billed) is sent again alone: the parts it answered are
 * kept, not asked (and billed by Gemini) a second time; the answer keeps request order; the
 * ledger charges each text once, as a request that met no failure.
 */
test.each([
  [
    ':batchEmbedContents (passed through)',
    async () => {
      const body = JSON.stringify({
        ...batch(250),
        requests: batch(250).requests.map((r) => ({ ...r, model: 'models/flaky/embed' })),
      })
      const res = await fetch(`${gw.url}/v1beta/models/flaky/embed:batchEmbedContents`, {
        method: 'POST',
        headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
        body,
      })
      expect(res.status, await res.clone().text()).toBe(200)
      return ((await res.json()) as any).embeddings.map((e: { values: number[] }) => e.values)
    },
  ],
  [
    '/v1/embeddings (translated)',
    async () => {
      const input = Array.from({ length: 250 }, (_, i) => `text ${i}`)
      const res = await fetch(`${gw.url}/v1/embeddings`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'flaky/embed', input, dimensions: 4 }),
      })
      expect(res.status, await res.clone().text()).toBe(200)
      return ((await res.json()) as any).data.map((d: { embedding: number[] }) => d.embedding)
    },
  ],
] as const)('%s: a failed part of a split batch is retried alone, in order', async (_, ask) => {
  flakySent.length = 0
  refuseOnce = 'text 100'
  const vectors = await ask()
  expect(flakySent).toEqual(['text 0', 'text 100', 'text 100', 'text 200'])
  expect(vectors).toHaveLength(250)
  // Each its own text's vector (scaled to unit length on the translated route: compare directions).
  for (const i of [0, 99, 100, 199, 200, 249]) {
    const want = Array.from(unitVector(`text ${i}`, 3072).subarray(0, 4))
    const norm = (v: number[]) => Math.hypot(...v)
    const cos =
      vectors[i].reduce((s: number, v: number, j: number) => s + v * want[j]!, 0) /
      (norm(vectors[i]) * norm(want))
    expect(cos).toBeCloseTo(1, 6)
  }
})

test('the ledger charges a retried split batch each text once: as much as one that met no failure', async () => {
  const input = Array.from({ length: 250 }, (_, i) => `text ${i}`)
  const run = async (account: string, refuse: string | null) => {
    const k = (await gw.key(account, 'pro')).key
    refuseOnce = refuse
    const res = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { ...bearer(k), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'flaky/embed', input }),
    })
    expect(res.status).toBe(200)
    return ((await res.json()) as any).usage.prompt_tokens
  }
  const clean = await run('clean-batch', null)
  const retried = await run('retried-batch', 'text 200')
  expect(retried).toBe(clean)
  expect((await logged('retried-batch')).prompt_tokens).toBe(clean)
  expect((await logged('retried-batch')).attempts).toBe(2)
})
