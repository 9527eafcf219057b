/**
 * A field OpenAI's embeddings request does not have, on a route the gateway translates (demo,
 * gemini), is refused as OpenAI refuses it ("Unrecognized request argument supplied"): 400
 * `unknown_parameter` naming it, before admission, so uncounted. It used to be embedded without a
 * word. An `openai` route passes it on, and the upstream's own answer decides. OpenAI's `user`,
 * which Gemini has no place for, is left out and named in `x-switchyard-dropped-params`, as chat
 * names it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startFakeGeminiEmbeddings } from '../../../support/fake-gemini-embeddings.ts'
import { type FakeUpstream, startFakeOpenAIEmbeddings } from '../../../support/fake-openai-embeddings.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

let openaiUp: FakeUpstream<'embeddings'>
let geminiUp: FakeUpstream<'embeddings'>
let gw: TestGateway
beforeAll(async () => {
  openaiUp = startFakeOpenAIEmbeddings({ apiKey: 'sk-up' })
  geminiUp = startFakeGeminiEmbeddings({ apiKey: 'AIza-up' })
  const embedding = { type: 'embedding', context_window: 8192, tier: 'free' }
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          ...DEMO_PROVIDER,
          models: [...DEMO_PROVIDER.models, { name: 'embed', ...embedding, dimensions: 8 }],
        },
        {
          prefix: 'oai',
          kind: 'openai',
          base_url: `${openaiUp.url}/v1`,
          api_key: 'sk-up',
          models: [{ name: 'small', upstream_name: 'text-embedding-3-small', ...embedding }],
        },
        {
          prefix: 'gem',
          kind: 'gemini',
          base_url: geminiUp.url,
          api_key: 'AIza-up',
          models: [{ name: 'embed', upstream_name: 'gemini-embedding-001', ...embedding }],
        },
      ],
    }),
  })
})
afterAll(async () => {
  await gw.stop()
  await openaiUp.stop()
  await geminiUp.stop()
})

const embed = (key: string, body: Record<string, unknown>) =>
  fetch(`${gw.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

test('an unknown field on a translated route → 400 unknown_parameter naming it, not counted', async () => {
  const { key } = await gw.key('unknown-translated', 'free') // rpm 5
  for (const model of ['demo/embed', 'gem/embed']) {
    const sentBefore = geminiUp.requests().length
    const res = await embed(key, { model, input: 'a query', input_type: 'query', task: 'x' })
    expect(res.status, model).toBe(400)
    expect(res.headers.get('x-request-id')).toBeTruthy()
    const error = ((await res.json()) as any).error
    expect(error).toMatchObject({
      type: 'invalid_request_error',
      code: 'unknown_parameter',
      param: 'input_type',
    })
    expect(error.message).toContain('Unrecognized request argument supplied: input_type, task')
    expect(geminiUp.requests().length).toBe(sentBefore)
  }
  // Sent as null it asks for nothing; not admitted before: the minute's five are all left.
  const ok = await embed(key, { model: 'demo/embed', input: 'a query', input_type: null })
  expect(ok.status).toBe(200)
  expect(ok.headers.get('x-ratelimit-remaining-requests')).toBe('4')
})

test("an openai route passes an unknown field on: the upstream's refusal names it", async () => {
  const { key } = await gw.key('unknown-forwarded', 'unlimited')
  const res = await embed(key, { model: 'oai/small', input: 'hi', input_type: 'query' })
  expect(openaiUp.lastRequest()?.body.input_type).toBe('query')
  expect(res.status).toBe(400)
  expect(((await res.json()) as any).error.message).toContain('input_type')
})

test('user to a Gemini model is left out and named in x-switchyard-dropped-params', async () => {
  const { key } = await gw.key('user-to-gemini', 'unlimited')
  const res = await embed(key, { model: 'gem/embed', input: 'hi', user: 'end-user-7' })
  expect(res.status).toBe(200)
  expect(res.headers.get('x-switchyard-dropped-params')).toBe('user')
  expect(JSON.stringify(geminiUp.lastRequest()?.body)).not.toContain('end-user-7')
  // Nothing left out, nothing named; the demo takes the request as it is, as on chat.
  const plain = await embed(key, { model: 'gem/embed', input: 'hi' })
  expect(plain.headers.get('x-switchyard-dropped-params')).toBeNull()
  const demo = await embed(key, { model: 'demo/embed', input: 'hi', user: 'end-user-7' })
  expect(demo.headers.get('x-switchyard-dropped-params')).toBeNull()
})

test("Gemini's taskType and title to a demo model are named in x-switchyard-dropped-params; outputDimensionality is its dimensions", async () => {
  const { key } = await gw.key('gemini-shape-fields', 'unlimited')
  const gemini = (model: string, method: string, body: Record<string, unknown>) =>
    fetch(`${gw.url}/v1beta/models/${model}:${method}`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  const content = { parts: [{ text: 'a document' }] }
  const one = { content, taskType: 'RETRIEVAL_DOCUMENT', title: 'Doc', outputDimensionality: 4 }
  const res = await gemini('demo/embed', 'embedContent', one)
  expect(res.status).toBe(200)
  expect(res.headers.get('x-switchyard-dropped-params')).toBe('taskType, title')
  expect(((await res.json()) as any).embedding.values).toHaveLength(4)
  // A batch names what any of its requests sent, once.
  const batch = await gemini('demo/embed', 'batchEmbedContents', {
    requests: [{ content }, { content, taskType: 'RETRIEVAL_QUERY' }],
  })
  expect(batch.status).toBe(200)
  expect(batch.headers.get('x-switchyard-dropped-params')).toBe('taskType')
  // Nothing left out, nothing named; a gemini model takes the client's body as it is.
  const plain = await gemini('demo/embed', 'embedContent', { content })
  expect(plain.headers.get('x-switchyard-dropped-params')).toBeNull()
  const passed = await gemini('gem/embed', 'batchEmbedContents', { requests: [one] })
  expect(passed.status).toBe(200)
  expect(passed.headers.get('x-switchyard-dropped-params')).toBeNull()
  expect(geminiUp.lastRequest()?.body.requests[0]).toMatchObject({
    taskType: 'RETRIEVAL_DOCUMENT',
    title: 'Doc',
  })
  // An openai model: translated to OpenAI's embeddings (gemini-embed-openai.test.ts), the same two named.
  const openai = await gemini('oai/small', 'embedContent', one)
  expect(openai.status).toBe(200)
  expect(openai.headers.get('x-switchyard-dropped-params')).toBe('taskType, title')
  expect(((await openai.json()) as any).embedding.values).toHaveLength(4)
})
