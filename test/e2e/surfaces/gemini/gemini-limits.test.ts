/**
 * The Gemini surface under token limits, against a local Gemini upstream that bills as Google does
 * (billing-gemini.ts) and an OpenAI-compatible chat upstream for the translated route:
 * - input the gateway cannot count (a video, audio or text file by URI, a URI without a type — a
 *   YouTube URL —, a `cachedContent`, `urlContext`'s fetched pages) is refused naming the field
 *   under a token or money limit, and passes without one; a PDF by URI is reserved as a file
 *   (10,000 tokens), as chat's file parts are; Google's built-in tools as provider-run tools;
 * - the translated route refuses, naming the field, what the chat upstream cannot take: audio
 *   other than wav / mp3, inline files other than PDF, files by a URI it cannot fetch (gs://,
 *   Gemini's Files API) or that are no image (no type, a video host), and sends a file part with
 *   its `filename`, as OpenAI's file part has it;
 * - `candidateCount` multiplies the reservation: N candidates, each billed, never take the
 *   account past its `tpm`;
 * - the answer's schema (`responseSchema`, `responseJsonSchema`) is input, counted as chat's
 *   `response_format` is: against the plan's `max_context_tokens` and in the reservation.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type MockUpstream, startMockUpstream } from '../../../../scripts/mock-upstream.ts'
import { type BillingGemini, startBillingGemini } from '../../../support/billing-gemini.ts'
import { PLANS, startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

const FEATURES = ['streaming', 'vision', 'audio_input', 'n', 'system_messages', 'tools', 'json_schema']
const model = (name: string) => ({
  name,
  context_window: 200_000,
  max_output_tokens: 8192,
  features: FEATURES,
})

/** The upstream name of `g/marked`: every event of its answers carries it (`modelVersion`). */
const MARKED = 'gemini-parse-once-marker'

let up: BillingGemini
let chat: MockUpstream
let gw: TestGateway
let open: string
let metered: string
beforeAll(async () => {
  ;[up, chat] = await Promise.all([
    startBillingGemini({ answerTokens: 400 }),
    startMockUpstream({ chunks: 2 }),
  ])
  gw = await startGateway({
    doc: testConfigDoc({
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'g',
          kind: 'gemini',
          base_url: up.url,
          api_key: 'g-key',
          models: [model('flash'), { ...model('marked'), upstream_name: MARKED }],
        },
        {
          prefix: 'o',
          kind: 'openai',
          base_url: chat.url,
          api_key: 'sk-mock',
          models: [model('gpt'), { ...model('gpt-drop'), unsupported_tools: 'drop' }],
        },
      ],
      plans: {
        ...PLANS,
        metered: { rpm: null, rpd: null, tpm: 1_000_000, models: ['*'] },
        tight: { rpm: null, rpd: null, tpm: 2_000, models: ['*'] },
        context: { rpm: null, rpd: null, tpm: 1_000_000, max_context_tokens: 2_000, models: ['*'] },
      },
    }),
  })
  open = (await gw.key('gemini-open', 'unlimited')).key
  metered = (await gw.key('gemini-metered', 'metered')).key
})
afterAll(async () => {
  await gw.stop()
  await Promise.all([up.stop(), chat.stop()])
})

const generate = (modelId: string, body: unknown, key: string) =>
  fetch(`${gw.url}/v1beta/models/${modelId}:generateContent`, {
    method: 'POST',
    headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

const withPart = (part: unknown, extra: Record<string, unknown> = {}) => ({
  contents: [{ role: 'user', parts: [{ text: 'What is in this?' }, part] }],
  ...extra,
})
const VIDEO = { fileData: { mimeType: 'video/mp4', fileUri: 'gs://bucket/talk.mp4' } }
const PDF = { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/paper.pdf' } }
/** As Google's docs send a YouTube video: no mimeType. */
const YOUTUBE = { fileData: { fileUri: 'https://www.youtube.com/watch?v=9hE5-98ZeCg' } }

describe('input the gateway cannot count', () => {
  test.each([
    ['a video by URI', withPart(VIDEO), 'contents[0].parts[1].fileData'],
    [
      'audio by a Files API URI',
      withPart({
        fileData: {
          mimeType: 'audio/ogg',
          fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc123',
        },
      }),
      'contents[0].parts[1].fileData',
    ],
    [
      'a cached context',
      withPart({ text: 'and this' }, { cachedContent: 'cachedContents/xyz' }),
      'cachedContent',
    ],
    ['a YouTube URL without a mimeType', withPart(YOUTUBE), 'contents[0].parts[1].fileData'],
    [
      'a text file by URI (the Files API holds up to 2 GB)',
      withPart({
        fileData: {
          mimeType: 'text/plain',
          fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/notes',
        },
      }),
      'contents[0].parts[1].fileData',
    ],
    [
      'urlContext (the pages it fetches bill as input)',
      withPart(
        { text: 'https://example.com/a' },
        { tools: [{ functionDeclarations: [] }, { urlContext: {} }] },
      ),
      'tools[1].urlContext',
    ],
  ])('%s: 400 naming the field under a token limit; passed through without one', async (_, body, param) => {
    const before = up.requests.length
    const refused = await generate('g/flash', body, metered)
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as any).error.message).toContain(param)
    expect(up.requests.length).toBe(before)
    const passed = await generate('g/flash', body, open)
    expect(passed.status).toBe(200)
    expect(up.requests.at(-1)!.body).toEqual(body)
  })

  test('a PDF by URI is reserved as a file: 10,000 tokens beyond its text', async () => {
    const { key } = await gw.key('gemini-pdf', 'metered')
    const res = await generate('g/flash', withPart(PDF, { generationConfig: { maxOutputTokens: 50 } }), key)
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    const reserved = 1_000_000 - Number(res.headers.get('x-ratelimit-remaining-tokens'))
    expect(reserved).toBeGreaterThanOrEqual(10_000)
  })

  test("Google's built-in tools are reserved as provider-run tools: 2,000 tokens each", async () => {
    const { key } = await gw.key('gemini-builtin-tools', 'metered')
    const body = withPart(
      { text: 'and search' },
      { tools: [{ googleSearch: {} }, { codeExecution: {} }], generationConfig: { maxOutputTokens: 50 } },
    )
    const res = await generate('g/flash', body, key)
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    const reserved = 1_000_000 - Number(res.headers.get('x-ratelimit-remaining-tokens'))
    expect(reserved).toBeGreaterThanOrEqual(2 * 2_000)
  })

  test('built-ins a route drops (unsupported_tools: drop) are neither held for nor refused as uncounted', async () => {
    const { key } = await gw.key('gemini-dropped-tools', 'metered')
    const body = withPart(
      { text: 'and read it' },
      { tools: [{ urlContext: {} }, { googleSearch: {} }], generationConfig: { maxOutputTokens: 50 } },
    )
    // urlContext's fetched pages are uncounted input where Google runs it: refused there.
    const google = await generate('g/flash', body, key)
    expect(google.status).toBe(400)
    expect(((await google.json()) as any).error.message).toContain('tools[0].urlContext')
    const res = await generate('o/gpt-drop', body, key)
    expect(`${res.status} ${res.headers.get('x-switchyard-dropped-tools')}`).toBe(
      '200 urlContext, googleSearch',
    )
    await res.arrayBuffer()
    const reserved = 1_000_000 - Number(res.headers.get('x-ratelimit-remaining-tokens'))
    expect(reserved).toBeGreaterThan(50)
    expect(reserved).toBeLessThan(2_000)
  })
})

describe('translated to a chat upstream: what it cannot take is a 400 naming the field', () => {
  const inline = (mimeType: string) => ({ inlineData: { mimeType, data: 'AAAA' } })
  test.each([
    ['audio other than wav / mp3', inline('audio/ogg'), 'contents[0].parts[1].inlineData.mimeType'],
    [
      'an image on Cloud Storage',
      { fileData: { mimeType: 'image/png', fileUri: 'gs://bucket/cat.png' } },
      'contents[0].parts[1].fileData.fileUri',
    ],
    [
      "an image in Gemini's Files API",
      {
        fileData: {
          mimeType: 'image/png',
          fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc123',
        },
      },
      'contents[0].parts[1].fileData.fileUri',
    ],
    ['a YouTube URL without a mimeType', YOUTUBE, 'contents[0].parts[1].fileData.fileUri'],
    [
      'an image type on a video host',
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://youtu.be/9hE5-98ZeCg' } },
      'contents[0].parts[1].fileData.fileUri',
    ],
    // OpenAI's chat file part takes PDF only.
    ['an inline video', inline('video/mp4'), 'contents[0].parts[1].inlineData.mimeType'],
    ['an inline text file', inline('text/plain'), 'contents[0].parts[1].inlineData.mimeType'],
    ['inline JSON', inline('application/json'), 'contents[0].parts[1].inlineData.mimeType'],
  ])('%s', async (_, part, param) => {
    const before = chat.stats.requests
    const res = await generate('o/gpt', withPart(part), open)
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error.message).toContain(param)
    expect(chat.stats.requests).toBe(before)
  })

  test('wav and mp3 pass as input_audio; a PDF as a file part with its filename', async () => {
    for (const [mime, format] of [
      ['audio/wav', 'wav'],
      ['audio/mpeg', 'mp3'],
    ]) {
      expect((await generate('o/gpt', withPart(inline(mime!)), open)).status).toBe(200)
      expect((chat.stats.lastBody as any).messages[0].content[1].input_audio.format).toBe(format)
    }
    expect((await generate('o/gpt', withPart(inline('application/pdf')), open)).status).toBe(200)
    expect((chat.stats.lastBody as any).messages[0].content[1]).toEqual({
      type: 'file',
      file: { filename: 'file.pdf', file_data: 'data:application/pdf;base64,AAAA' },
    })
  })
})

describe('candidateCount multiplies the reservation (DESIGN §11: n choices multiply the output)', () => {
  test.each([
    ['JSON', 'generateContent'],
    ['stream', 'streamGenerateContent?alt=sse'],
  ])('%s: three candidates, each billed, never take the account past its tpm', async (name, method) => {
    const { key } = await gw.key(`gemini-candidates-${name}`, 'tight')
    const from = up.bills.length
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${gw.url}/v1beta/models/g/flash:${method}`, {
        method: 'POST',
        headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({
          contents: [{ role: 'user', parts: [{ text: 'Write three short poems.' }] }],
          generationConfig: { candidateCount: 3 },
        }),
      })
      statuses.push(res.status)
      await res.arrayBuffer()
    }
    const bills = up.bills.slice(from)
    expect(bills.length).toBeGreaterThan(0)
    expect(statuses[0]).toBe(200)
    for (const b of bills) {
      expect(b.candidates).toBe(3)
      // What the upstream was told it may generate, for all three, fits what the limit left.
      expect(b.cap! * 3 + b.input).toBeLessThanOrEqual(2_000)
    }
    expect(bills.reduce((n, b) => n + b.input + b.output, 0)).toBeLessThanOrEqual(2_000)
  })
})

describe("the answer's schema is input, counted as chat's response_format (DESIGN §11)", () => {
  /** A schema of `words` words: its description is what the model reads, and what Google bills. */
  const schemaOf = (words: number) => ({
    type: 'OBJECT',
    description: 'lorem '.repeat(words).trim(),
    properties: { answer: { type: 'STRING' } },
  })
  const asked = (field: string, words: number) => ({
    contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
    generationConfig: { maxOutputTokens: 10, responseMimeType: 'application/json', [field]: schemaOf(words) },
  })
  const routes = [
    ['g/flash', 'a Gemini upstream (pass-through)'],
    ['o/gpt', 'an OpenAI upstream (translated)'],
  ]
  const fields = ['responseSchema', 'responseJsonSchema']

  test.each(routes.flatMap(([id, route]) => fields.map((f) => [f, route, id!])))(
    "%s on %s: a schema past the plan's max_context_tokens is 400 context_length_exceeded; a small one is reserved",
    async (field, _, id) => {
      const { key } = await gw.key(`gemini-schema-${field}-${id!.replace('/', '-')}`, 'context')
      const calls = up.requests.length + chat.stats.requests
      const refused = await generate(id!, asked(field!, 3_000), key)
      expect(refused.status).toBe(400)
      const body = (await refused.json()) as any
      expect(body.error.status).toBe('INVALID_ARGUMENT')
      expect(body.error.message).toContain("context limit of the plan 'context'")
      expect(up.requests.length + chat.stats.requests).toBe(calls)
      // 200 words of schema: within the plan's cap, and held in the reservation (input + 10 output).
      const res = await generate(id!, asked(field!, 200), key)
      expect(res.status).toBe(200)
      await res.arrayBuffer()
      const reserved = 1_000_000 - Number(res.headers.get('x-ratelimit-remaining-tokens'))
      expect(reserved).toBeGreaterThan(200)
    },
  )
})

describe('the pass-through under a limit reads each byte once (DESIGN §16)', () => {
  test('the cap is edited into the body as it came: nothing else re-serialised', async () => {
    const sent = `{"contents": [{"role": "user", "parts": [{"text": "caf\\u00e9 at 1.0"}]}], "generationConfig": {"temperature": 1.0}}`
    const res = await fetch(`${gw.url}/v1beta/models/g/flash:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': metered, 'content-type': 'application/json' },
      body: sent,
    })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    const cap = res.headers.get('x-switchyard-max-tokens')
    expect(cap).not.toBeNull()
    expect(up.requests.at(-1)!.raw).toBe(
      sent.replace('{"temperature": 1.0}', `{"maxOutputTokens":${cap},"temperature": 1.0}`),
    )
  })

  test.each([
    ['stream', 'streamGenerateContent?alt=sse'],
    ['JSON', 'generateContent'],
  ])(
    '%s: each upstream event is parsed once, by the gate, the relay and the assembly together',
    async (_, method) => {
      // An event is parsed by JSON.parse, or on its bytes by Bun.JSONL.parseChunk (a one-line event).
      const parse = JSON.parse
      const parseChunk = Bun.JSONL.parseChunk
      let parses = 0
      const marked = (text: string) => text.includes(MARKED) && text.includes('candidates')
      JSON.parse = ((text: string, reviver?: any) => {
        if (typeof text === 'string' && marked(text)) parses++
        return parse(text, reviver)
      }) as typeof JSON.parse
      Bun.JSONL.parseChunk = ((input: any, start?: number, end?: number) => {
        if (typeof input !== 'string' && marked(Buffer.from(input).toString('utf8', start, end))) parses++
        return parseChunk(input, start, end)
      }) as typeof parseChunk
      try {
        const res = await fetch(`${gw.url}/v1beta/models/g/marked:${method}`, {
          method: 'POST',
          headers: { 'x-goog-api-key': metered, 'content-type': 'application/json' },
          body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Count to ten.' }] }] }),
        })
        expect(res.status).toBe(200)
        await res.arrayBuffer()
      } finally {
        JSON.parse = parse
        Bun.JSONL.parseChunk = parseChunk
      }
      // 400 words, 25 an event.
      expect(parses).toBe(16)
    },
  )
})
