/**
 * The Gemini surface (DESIGN §14) through `@google/genai`, unmodified (its default API version,
 * v1, and v1beta as Gemini CLI calls), against one gateway with a provider of every kind:
 * generateContent, generateContentStream, countTokens and embedContent on the demo, through a
 * gemini provider (pass-through: the client's body reaches it as sent, under the provider's key),
 * and through openai and anthropic providers (translated). Then what every surface owes: usage
 * rows with surface `gemini`, the limits' 429 in Google's shape (RESOURCE_EXHAUSTED), 400s naming
 * the field, the key from x-goog-api-key, `?key=` or a bearer, `thinkingConfig` mapped both ways.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FAKE_GEMINI_COUNT } from '../../../support/fake-gemini.ts'
import { ADMIN_TOKEN } from '../../../support/gateway.ts'
import {
  type GeminiBed,
  loadGenAI,
  OPENAI_TEXT,
  startGeminiBed,
  UPSTREAM_KEY,
} from '../../../support/gemini-bed.ts'

let bed: GeminiBed
let genai: any

beforeAll(async () => {
  genai = await loadGenAI('the @google/genai tests of test/e2e/surfaces/gemini/gemini-sdk.test.ts')
  bed = await startGeminiBed()
})
afterAll(async () => {
  await bed?.stop()
})

const client = (key = bed.key, apiVersion?: string) =>
  new genai.GoogleGenAI({
    apiKey: key,
    httpOptions: { baseUrl: bed.gw.url, ...(apiVersion ? { apiVersion } : {}) },
  })

const post = (path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': bed.key }) =>
  fetch(`${bed.gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

const HELLO = { contents: [{ role: 'user', parts: [{ text: 'hello there' }] }] }

/** What each route answers the SDK (the recorded gemini stream, the fakes' texts, the demo's echo). */
const ROUTES: Array<{ model: string; json: RegExp; stream: RegExp }> = [
  { model: 'demo/agent', json: /^Echo: hello there$/, stream: /^Echo: hello there$/ },
  { model: 'gemini/text', json: /There are \*\*3\*\* r's/, stream: /There are \*\*3\*\* "r"s/ },
  { model: 'openai/gpt', json: new RegExp(`^${OPENAI_TEXT}$`), stream: new RegExp(`^${OPENAI_TEXT}$`) },
  { model: 'anthropic/text', json: /^Hello!$/, stream: /^Hello! I'm doing well/ },
]

describe('@google/genai through Switchyard', () => {
  for (const route of ROUTES) {
    test(`generateContent, generateContentStream and countTokens on ${route.model}`, async () => {
      if (!genai) return
      const ai = client()
      const one = await ai.models.generateContent({ model: route.model, contents: 'hello there' })
      expect(one.text).toMatch(route.json)
      expect(one.candidates[0].finishReason).toBe('STOP')
      expect(one.usageMetadata.promptTokenCount).toBeGreaterThan(0)
      let streamed = ''
      let usage: any = null
      // As Gemini CLI calls it: API version v1beta, `?alt=sse`.
      for await (const c of await client(bed.key, 'v1beta').models.generateContentStream({
        model: route.model,
        contents: 'hello there',
      })) {
        streamed += c.text ?? ''
        usage = c.usageMetadata ?? usage
      }
      expect(streamed).toMatch(route.stream)
      expect(usage?.totalTokenCount).toBeGreaterThan(0)
      const count = await ai.models.countTokens({ model: route.model, contents: 'hello there' })
      if (route.model.startsWith('gemini/')) expect(count.totalTokens).toBe(FAKE_GEMINI_COUNT)
      else expect(count.totalTokens).toBeGreaterThan(0)
    }, 30_000)
  }

  test('a gemini provider gets the client body byte for byte, at its own model name, under its own key', async () => {
    const before = bed.gemini.requests().length
    const body =
      '{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"safetySettings":[],"labels":{"a":"b"}}'
    const r = await post('/v1beta/models/gemini/text:streamGenerateContent?alt=sse', body)
    expect(r.status).toBe(200)
    const text = await r.text()
    // The recorded events as they came (one `data:` line each), not re-encoded.
    expect(text).toContain('"modelVersion":"gemini-3-pro-preview"')
    const seen = bed.gemini.requests().slice(before)
    expect(seen.length).toBe(1)
    expect(seen[0]!.path).toBe('/v1beta/models/text:streamGenerateContent?alt=sse')
    expect(JSON.stringify(seen[0]!.body)).toBe(body)
    expect(seen[0]!.headers['x-goog-api-key']).toBe(UPSTREAM_KEY)
  })

  test('embedContent on the demo and through a gemini provider (pass-through)', async () => {
    if (!genai) return
    const ai = client()
    const demo = await ai.models.embedContent({ model: 'demo/embed', contents: ['a', 'b'] })
    expect(demo.embeddings.map((e: any) => e.values.length)).toEqual([64, 64])
    const before = bed.embeddings.requests().length
    const gem = await ai.models.embedContent({
      model: 'gemb/embed',
      contents: 'a',
      config: { outputDimensionality: 8 },
    })
    expect(gem.embeddings[0].values.length).toBe(8)
    const seen = bed.embeddings.requests().slice(before)
    expect(seen[0]!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents')
    expect(seen[0]!.body.requests[0].model).toBe('models/gemini-embedding-001')
    // embedContent in its own shape.
    const r = await post('/v1beta/models/demo/embed:embedContent', { content: { parts: [{ text: 'x' }] } })
    expect(((await r.json()) as any).embedding.values.length).toBe(64)
  })

  test('GET /v1beta/models and /v1beta/models/{model} in Google shape; the SDK lists and gets', async () => {
    const r = await fetch(`${bed.gw.url}/v1beta/models?key=${bed.key}`)
    const list = (await r.json()) as { models: Array<Record<string, any>> }
    const agent = list.models.find((m) => m.name === 'models/demo/agent')!
    expect(agent).toMatchObject({ inputTokenLimit: 200_000, outputTokenLimit: 8192, thinking: true })
    expect(agent.supportedGenerationMethods).toContain('streamGenerateContent')
    expect(list.models.find((m) => m.name === 'models/demo/embed')!.supportedGenerationMethods).toEqual([
      'embedContent',
      'batchEmbedContents',
    ])
    const missing = await fetch(`${bed.gw.url}/v1beta/models/demo/nope`, {
      headers: { 'x-goog-api-key': bed.key },
    })
    expect(missing.status).toBe(404)
    expect(((await missing.json()) as any).error.status).toBe('NOT_FOUND')
    if (!genai) return
    const got = await client().models.get({ model: 'demo/agent' })
    expect(got.name).toBe('models/demo/agent')
    const names: string[] = []
    for await (const m of await client().models.list()) names.push(m.name)
    expect(names).toContain('models/openai/gpt')
  })
})

describe('the pipeline, in Google terms', () => {
  test('usage rows carry surface gemini; the limits refuse with 429 RESOURCE_EXHAUSTED', async () => {
    const { key } = await bed.gw.key('gemini-tiny', 'tiny')
    const first = await post('/v1beta/models/demo/agent:generateContent', HELLO, { 'x-goog-api-key': key })
    expect(first.status).toBe(200)
    const second = await post('/v1beta/models/demo/agent:generateContent', HELLO, { 'x-goog-api-key': key })
    expect(second.status).toBe(429)
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0)
    const body = (await second.json()) as any
    expect(body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' })
    expect(body.error.message).toContain('per minute')
    // The wait where Google's clients read it: RetryInfo beside ErrorInfo, in Google's duration form.
    const retry = body.error.details.find(
      (d: any) => d['@type'] === 'type.googleapis.com/google.rpc.RetryInfo',
    )
    expect(retry).toEqual({
      '@type': 'type.googleapis.com/google.rpc.RetryInfo',
      retryDelay: `${second.headers.get('retry-after')}s`,
    })
    expect(body.error.details[0]['@type']).toBe('type.googleapis.com/google.rpc.ErrorInfo')
    await bed.gw.deps.recorder.flush()
    const log = await fetch(`${bed.gw.url}/admin/v1/requests?surface=gemini&account=gemini-tiny`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })
    const page = (await log.json()) as { data: Array<{ surface: string; model: string; status: number }> }
    const rows = page.data
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.every((r) => r.surface === 'gemini')).toBe(true)
    expect(rows.some((r) => r.model === 'demo/agent' && r.status === 200)).toBe(true)
  })

  test('a failing gemini pass-through falls back to a translated openai model; a model outside the plan is 403', async () => {
    const r = await post('/v1beta/models/gemini/unavailable:streamGenerateContent?alt=sse', HELLO)
    expect(r.status).toBe(200)
    expect(await r.text()).toContain('Hello from ')
    const { key } = await bed.gw.key('gemini-free', 'free')
    const denied = await post('/v1beta/models/openai/gpt:generateContent', HELLO, { 'x-goog-api-key': key })
    expect(denied.status).toBe(403)
    expect(((await denied.json()) as any).error.status).toBe('PERMISSION_DENIED')
  })

  test('keys from x-goog-api-key, ?key= and a bearer; none → 401 UNAUTHENTICATED', async () => {
    const path = '/v1beta/models/demo/agent:generateContent'
    expect((await post(path, HELLO)).status).toBe(200)
    expect((await post(`${path}?key=${bed.key}`, HELLO, {})).status).toBe(200)
    expect((await post(path, HELLO, { authorization: `Bearer ${bed.key}` })).status).toBe(200)
    const none = await post(path, HELLO, {})
    expect(none.status).toBe(401)
    expect(((await none.json()) as any).error.status).toBe('UNAUTHENTICATED')
    // A key in the query never reaches a log line (access lines carry the path only).
    expect(bed.gw.logs.some((l) => l.includes(bed.key))).toBe(false)
  })

  test('bad bodies and paths: 400 INVALID_ARGUMENT naming the field, 404 NOT_FOUND, never a 500', async () => {
    const bad = await post('/v1beta/models/demo/agent:generateContent', {
      contents: [{ role: 'user', parts: 'x' }],
    })
    expect(bad.status).toBe(400)
    const err = ((await bad.json()) as any).error
    expect(err.status).toBe('INVALID_ARGUMENT')
    expect(err.message).toContain('contents[0].parts')
    expect(err.details.find((d: any) => d.fieldViolations).fieldViolations[0].field).toBe('contents[0].parts')
    const notJson = await post('/v1beta/models/demo/agent:generateContent', '{"contents": [')
    expect(notJson.status).toBe(400)
    const badRole = await post('/v1beta/models/openai/gpt:generateContent', {
      contents: [{ role: 'robot', parts: [{ text: 'x' }] }],
    })
    expect(((await badRole.json()) as any).error.details[1].fieldViolations[0].field).toBe('contents[0].role')
    const model = await post('/v1beta/models/demo/nope:generateContent', HELLO)
    expect(model.status).toBe(404)
    expect(((await model.json()) as any).error.status).toBe('NOT_FOUND')
    // The other methods' bodies too.
    const count = await post('/v1beta/models/demo/agent:countTokens', { contents: 'x' })
    expect(((await count.json()) as any).error.details[1].fieldViolations[0].field).toBe('contents')
    // countTokens refuses the generationConfig :generateContent refuses, named alike.
    const contents = [{ role: 'user', parts: [{ text: 'x' }] }]
    for (const generationConfig of [{ temperature: 'hot' }, 'garbage', { maxOutputTokens: -1 }]) {
      const [counted, generated] = await Promise.all(
        [':countTokens', ':generateContent'].map((m) =>
          post(`/v1beta/models/demo/agent${m}`, { contents, generationConfig }),
        ),
      )
      const [a, b] = [(await counted!.json()) as any, (await generated!.json()) as any]
      expect([counted!.status, generated!.status]).toEqual([400, 400])
      expect(a.error.details[1].fieldViolations[0].field).toBe(b.error.details[1].fieldViolations[0].field)
    }
    const embed = await post('/v1beta/models/demo/embed:batchEmbedContents', { requests: [{ content: {} }] })
    expect(((await embed.json()) as any).error.details[1].fieldViolations[0].field).toBe(
      'requests[0].content.parts',
    )
    const method = await post('/v1beta/models/demo/agent:predict', HELLO)
    expect(method.status).toBe(404)
    expect(((await method.json()) as any).error.status).toBe('NOT_FOUND')
    // Whatever it sends: the method is the route, judged before the body's type (audit64 3d).
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      const odd = await post('/v1beta/models/demo/echo:fooBar', 'a=1', {
        'x-goog-api-key': bed.key,
        'content-type': type,
      })
      expect(odd.status).toBe(404)
      const e = ((await odd.json()) as any).error
      expect(e.status).toBe('NOT_FOUND')
      expect(e.message).toContain('fooBar')
    }
    // A chat model on an embedding method, and the reverse: 400 naming `model`.
    const wrong = await post('/v1beta/models/demo/embed:generateContent', HELLO)
    expect(wrong.status).toBe(400)
    expect(((await wrong.json()) as any).error.details[1].fieldViolations[0].field).toBe('model')
  })

  test("the demo's embeddings answer is bounded: more than 16,384 values in all → 400 naming the requests, none made", async () => {
    const requests = (n: number, dims?: number) => ({
      requests: Array.from({ length: n }, () => ({
        content: { parts: [{ text: 'a' }] },
        ...(dims ? { outputDimensionality: dims } : {}),
      })),
    })
    // demo/embed has 64 values: 256 inputs fit, 257 do not; 2,048 at 8 values fit.
    const big = await post('/v1beta/models/demo/embed:batchEmbedContents', requests(257))
    expect(big.status).toBe(400)
    const error = ((await big.json()) as any).error
    expect(error.status).toBe('INVALID_ARGUMENT')
    expect(error.details[1].fieldViolations[0].field).toBe('requests')
    expect(error.message).toContain('16384 values')
    const fits = await post('/v1beta/models/demo/embed:batchEmbedContents', requests(256))
    expect(fits.status).toBe(200)
    expect(((await fits.json()) as any).embeddings).toHaveLength(256)
    const small = await post('/v1beta/models/demo/embed:batchEmbedContents', requests(2048, 8))
    expect(small.status).toBe(200)
    expect(((await small.json()) as any).embeddings).toHaveLength(2048)
  })

  test('the model may arrive %2F-encoded; without alt=sse the stream is one JSON array', async () => {
    for (const model of ['demo%2Fagent', 'gemini%2Ftext', 'openai%2Fgpt']) {
      const r = await post(`/v1beta/models/${model}:streamGenerateContent`, HELLO)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toContain('application/json')
      const events = JSON.parse(await r.text()) as any[]
      expect(Array.isArray(events)).toBe(true)
      expect(events.at(-1).candidates[0].finishReason).toBe('STOP')
    }
  })

  test('thinkingConfig: a budget reaches anthropic as thinking, a model without reasoning refuses it by name', async () => {
    const before = bed.anthropic.requests().length
    const asked = {
      ...HELLO,
      generationConfig: {
        maxOutputTokens: 8000,
        thinkingConfig: { thinkingBudget: 100_000, includeThoughts: true },
      },
    }
    const r = await post('/v1beta/models/anthropic/thinking:generateContent', asked)
    expect(r.status).toBe(200)
    const sent = bed.anthropic.requests().slice(before)[0]!.body
    // Clamped to what the target takes: a budget below its max_tokens.
    expect(sent.thinking.type).toBe('enabled')
    expect(sent.thinking.budget_tokens).toBeLessThan(sent.max_tokens)
    // The recorded thinking comes back as thought parts (includeThoughts).
    const parts = ((await r.json()) as any).candidates[0].content.parts
    expect(parts[0].thought).toBe(true)
    const refused = await post('/v1beta/models/openai/gpt:generateContent', {
      ...HELLO,
      generationConfig: { thinkingConfig: { thinkingBudget: 1024 } },
    })
    expect(refused.status).toBe(400)
    const err = ((await refused.json()) as any).error
    expect(err.details[1].fieldViolations[0].field).toBe('generationConfig.thinkingConfig.thinkingBudget')
    // includeThoughts alone asks nothing of the model (Gemini CLI sends it every turn).
    const plain = await post('/v1beta/models/openai/gpt:generateContent', {
      ...HELLO,
      safetySettings: [],
      generationConfig: { thinkingConfig: { includeThoughts: true }, responseModalities: ['TEXT'] },
    })
    expect(plain.status).toBe(200)
    // What the translation leaves out is named, never dropped in silence.
    expect(plain.headers.get('x-switchyard-dropped-params')).toBe(
      'safetySettings, generationConfig.responseModalities',
    )
  })

  test('under a token limit the pass-through is counted and cut at the allowance, JSON assembled from the stream', async () => {
    const { key } = await bed.gw.key('gemini-metered', 'metered')
    const h = { 'x-goog-api-key': key }
    const before = bed.gemini.requests().length
    const whole = await post('/v1beta/models/gemini/text:generateContent', HELLO, h)
    expect(whole.status).toBe(200)
    const answer = (await whole.json()) as any
    // A JSON request goes upstream as a stream (it could not be cut otherwise), with the cap set.
    const sent = bed.gemini.requests().slice(before)[0]!
    expect(sent.path).toBe('/v1beta/models/text:streamGenerateContent?alt=sse')
    expect(sent.body.generationConfig.maxOutputTokens).toBeGreaterThan(0)
    expect(answer.candidates[0].content.parts[0].text).toContain('There are **3** "r"s in strawberry.')
    expect(answer.usageMetadata.totalTokenCount).toBe(217)
    // A cap of 12 tokens: the first event fits and goes out; the next would pass the cap, so it is
    // held back and Gemini's own ending follows, counting what was relayed (cut63: told = settled ≤ held).
    const capped = { ...HELLO, generationConfig: { maxOutputTokens: 12 } }
    const cut = await post('/v1beta/models/gemini/text:streamGenerateContent?alt=sse', capped, h)
    const events = (await cut.text())
      .split(/\r?\n\r?\n/)
      .filter((e) => e.startsWith('data: '))
      .map((e) => JSON.parse(e.slice(6)))
    expect(events.length).toBe(2)
    expect(events[0].candidates[0].content.parts[0].text).toBe('There are **3**')
    expect(events[1].candidates[0].finishReason).toBe('MAX_TOKENS')
    const told = events[1].usageMetadata.candidatesTokenCount
    expect(told).toBeGreaterThan(0)
    expect(told).toBeLessThanOrEqual(12)
  })
})
