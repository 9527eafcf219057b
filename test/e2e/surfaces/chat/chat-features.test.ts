/**
 * The feature check end to end, one row per feature of the vocabulary (DESIGN §3) plus the
 * temperature range: a model without the feature refuses with 400 `unsupported_feature` naming
 * the field, before anything reaches the upstream; a model with it forwards the field upstream.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FEATURES } from '../../../../src/config/schema-providers.ts'
import {
  type ChatBed,
  expectError,
  readSSE,
  startChatBed,
  userMessage,
  WEATHER_TOOLS,
} from '../../../support/chat-bed.ts'

let bed: ChatBed
beforeAll(async () => {
  bed = await startChatBed()
})
afterAll(() => bed.stop())

const IMAGE = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } }
const PDF = {
  type: 'file',
  file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' },
}
const AUDIO = { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }
const withPart = (part: unknown) => [
  { role: 'user', content: [{ type: 'text', text: 'What is this?' }, part] },
]
const LEGACY_FUNCTION = { name: 'get_weather', parameters: { type: 'object', properties: {} } }
const TOOL_TURN = [
  { role: 'user', content: 'Weather in Paris?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: '18C' },
]

interface Row {
  /** The feature the `no-<feature>` model lacks. */
  feature: (typeof FEATURES)[number]
  /** What the request adds to `{ model, messages }`. */
  body: Record<string, unknown>
  /** The `param` of the refusal. */
  param: string
  /** The `param` a model with no features names, when another feature comes first. */
  bareParam?: string
  /** Checks the upstream saw the field. */
  forwarded: (upstream: Record<string, any>) => void
}

const ROWS: Row[] = [
  {
    feature: 'streaming',
    body: { stream: true },
    param: 'stream',
    forwarded: (up) => expect(up.stream).toBe(true),
  },
  {
    feature: 'tools',
    body: { tools: WEATHER_TOOLS, tool_choice: 'auto' },
    param: 'tools',
    forwarded: (up) => expect(up).toMatchObject({ tools: WEATHER_TOOLS, tool_choice: 'auto' }),
  },
  {
    feature: 'tools',
    body: { messages: TOOL_TURN },
    param: 'messages[1].tool_calls',
    forwarded: (up) => expect(up.messages).toEqual(TOOL_TURN),
  },
  {
    feature: 'tools',
    body: { messages: [TOOL_TURN[0], { role: 'tool', tool_call_id: 'call_1', content: '18C' }] },
    param: 'messages[1].role',
    forwarded: (up) =>
      expect(up.messages[1]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '18C' }),
  },
  // OpenAI's deprecated function calling is tool use too.
  {
    feature: 'tools',
    body: { functions: [LEGACY_FUNCTION], function_call: 'auto' },
    param: 'functions',
    forwarded: (up) => expect(up).toMatchObject({ functions: [LEGACY_FUNCTION], function_call: 'auto' }),
  },
  {
    feature: 'tools',
    body: { function_call: { name: 'get_weather' } },
    param: 'function_call',
    forwarded: (up) => expect(up.function_call).toEqual({ name: 'get_weather' }),
  },
  {
    feature: 'parallel_tool_calls',
    body: { tools: WEATHER_TOOLS, parallel_tool_calls: true },
    param: 'parallel_tool_calls',
    bareParam: 'tools',
    forwarded: (up) => expect(up.parallel_tool_calls).toBe(true),
  },
  {
    feature: 'vision',
    body: { messages: withPart(IMAGE) },
    param: 'messages[0].content[1]',
    forwarded: (up) => expect(up.messages[0].content[1]).toEqual(IMAGE),
  },
  // A file part (a PDF) is read by the same capability as images; Messages' document blocks are too.
  {
    feature: 'vision',
    body: { messages: withPart(PDF) },
    param: 'messages[0].content[1]',
    forwarded: (up) => expect(up.messages[0].content[1]).toEqual(PDF),
  },
  {
    feature: 'audio_input',
    body: { messages: withPart(AUDIO) },
    param: 'messages[0].content[1]',
    forwarded: (up) => expect(up.messages[0].content[1]).toEqual(AUDIO),
  },
  {
    feature: 'json_mode',
    body: { response_format: { type: 'json_object' } },
    param: 'response_format',
    forwarded: (up) => expect(up.response_format).toEqual({ type: 'json_object' }),
  },
  {
    feature: 'json_schema',
    body: {
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: {} } },
      },
    },
    param: 'response_format',
    forwarded: (up) => expect(up.response_format.json_schema.name).toBe('answer'),
  },
  {
    feature: 'logprobs',
    body: { logprobs: true, top_logprobs: 3 },
    param: 'logprobs',
    forwarded: (up) => expect(up).toMatchObject({ logprobs: true, top_logprobs: 3 }),
  },
  {
    feature: 'n',
    body: { n: 3 },
    param: 'n',
    forwarded: (up) => expect(up.n).toBe(3),
  },
  {
    feature: 'system_messages',
    body: { messages: [{ role: 'system', content: 'Be brief.' }, ...userMessage()] },
    param: 'messages[0].role',
    forwarded: (up) => expect(up.messages[0]).toEqual({ role: 'system', content: 'Be brief.' }),
  },
  {
    feature: 'system_messages',
    body: { messages: [...userMessage(), { role: 'developer', content: 'Be brief.' }] },
    param: 'messages[1].role',
    forwarded: (up) => expect(up.messages[1]).toEqual({ role: 'developer', content: 'Be brief.' }),
  },
  {
    feature: 'reasoning',
    body: { reasoning_effort: 'low' },
    param: 'reasoning_effort',
    forwarded: (up) => expect(up.reasoning_effort).toBe('low'),
  },
]

const request = (model: string, body: Record<string, unknown>) => ({
  model,
  messages: userMessage(),
  ...body,
})

/** Sends and fully reads the answer (SSE or JSON); returns the status. */
async function send(body: Record<string, unknown>): Promise<number> {
  const res = await bed.post(body)
  if (res.status === 200 && body.stream === true) expect((await readSSE(res)).done).toBe(true)
  else await res.arrayBuffer()
  return res.status
}

async function expectRefused(model: string, body: Record<string, unknown>, param: string) {
  bed.mock.reset()
  const res = await bed.post(request(model, body))
  const err = await expectError(res, 400, 'unsupported_feature')
  expect(err.error.param).toBe(param)
  expect(err.error.message).toContain(model)
  expect(bed.mock.stats.requests).toBe(0)
}

describe('feature check: refused without the feature, forwarded with it', () => {
  test('the rows cover every feature of the vocabulary (prefill is never used by a request: below)', () => {
    expect(new Set(ROWS.map((r) => r.feature))).toEqual(new Set(FEATURES.filter((f) => f !== 'prefill')))
  })

  test('a request ending with an assistant message is answered by a model without prefill', async () => {
    bed.mock.reset()
    const messages = [...userMessage(), { role: 'assistant', content: 'The answer is' }]
    expect(await send(request('mock/no-prefill', { messages }))).toBe(200)
    expect(bed.mock.stats.requests).toBe(1)
  })

  for (const row of ROWS) {
    test(`${row.feature} (${row.param})`, async () => {
      await expectRefused(`mock/no-${row.feature}`, row.body, row.param)
      await expectRefused('mock/bare', row.body, row.bareParam ?? row.param)

      bed.mock.reset()
      expect(await send(request('mock/gpt-4o-mini', row.body))).toBe(200)
      expect(bed.mock.stats.requests).toBe(1)
      row.forwarded(bed.mock.stats.lastBody as Record<string, unknown>)

      // The model that lacks only this feature serves everything else: the refusal is exact.
      bed.mock.reset()
      expect(await send(request(`mock/no-${row.feature}`, {}))).toBe(200)
      expect(bed.mock.stats.requests).toBe(1)
    })
  }

  // Translated, they were dropped: the model answered in text where a function call was asked for.
  test('functions / function_call on a route that translates (demo) → 400 naming the field; none → answered', async () => {
    for (const [body, param] of [
      [{ functions: [LEGACY_FUNCTION] }, 'functions'],
      [{ function_call: { name: 'get_weather' } }, 'function_call'],
    ] as const) {
      const res = await bed.post(request('demo/echo', body))
      const err = await expectError(res, 400, 'unsupported_parameter')
      expect(err.error.param).toBe(param)
      expect(err.error.message).toContain('tools')
    }
    expect(await send(request('demo/echo', { function_call: 'none' }))).toBe(200)
  })

  // Dropped by a translating adapter, they left a text answer where audio or a searched one was asked for.
  test('audio output and web_search_options on a route that translates (demo) → 400 naming the field; forwarded to openai', async () => {
    const asks: Array<[Record<string, unknown>, string]> = [
      [{ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }, 'modalities'],
      [{ audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
      [{ web_search_options: { search_context_size: 'low' } }, 'web_search_options'],
    ]
    for (const [body, param] of asks) {
      const err = await expectError(await bed.post(request('demo/echo', body)), 400, 'unsupported_parameter')
      expect(err.error.param).toBe(param)
      bed.mock.reset()
      expect(await send(request('mock/gpt-4o-mini', body))).toBe(200)
      expect(bed.mock.stats.lastBody).toMatchObject(body)
    }
    expect(await send(request('demo/echo', { modalities: ['text'] }))).toBe(200)
  })

  test('features that are not used need not be supported: a bare model answers a plain request', async () => {
    bed.mock.reset()
    expect(await send(request('mock/bare', {}))).toBe(200)
    expect(bed.mock.stats.lastBody).toMatchObject({ model: 'gpt-4o-mini', messages: userMessage() })
    // Unused opt-outs are not uses: n 1, logprobs false. (A tool_choice, even "none", needs tools.)
    expect(await send(request('mock/bare', { n: 1, logprobs: false }))).toBe(200)
  })

  test('several missing features: param names the first, the message names the others', async () => {
    bed.mock.reset()
    const res = await bed.post(request('mock/bare', { stream: true, n: 2, tools: WEATHER_TOOLS }))
    const err = await expectError(res, 400, 'unsupported_feature')
    expect(err.error.param).toBe('stream')
    expect(err.error.message).toContain('tools, n')
    expect(bed.mock.stats.requests).toBe(0)
  })
})

describe('temperature range', () => {
  test("outside the model's range → 400 unsupported_feature param temperature, upstream untouched", async () => {
    for (const temperature of [1.5, 2]) {
      bed.mock.reset()
      const err = await expectError(
        await bed.post(request('mock/cool', { temperature })),
        400,
        'unsupported_feature',
      )
      expect(err.error.param).toBe('temperature')
      expect(err.error.message).toContain('0 to 1')
      expect(bed.mock.stats.requests).toBe(0)
    }
  })

  // Issue 22: "left out" used to send the gateway's default 1; the upstream applies its own.
  test('inside the range → forwarded as given; left out → left out', async () => {
    bed.mock.reset()
    expect(await send(request('mock/gpt-4o-mini', { temperature: 1.5 }))).toBe(200)
    expect((bed.mock.stats.lastBody as { temperature: number }).temperature).toBe(1.5)
    expect(await send(request('mock/cool', { temperature: 0.3 }))).toBe(200)
    expect((bed.mock.stats.lastBody as { temperature: number }).temperature).toBe(0.3)
    expect(await send(request('mock/cool', {}))).toBe(200)
    expect('temperature' in (bed.mock.stats.lastBody as object)).toBe(false)
  })

  test('beyond OpenAI range (0–2) → 400 naming temperature on any model', async () => {
    bed.mock.reset()
    const res = await bed.post(request('mock/gpt-4o-mini', { temperature: 2.5 }))
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe('temperature')
    expect(bed.mock.stats.requests).toBe(0)
  })
})
