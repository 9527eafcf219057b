/**
 * The official `openai` client → the real gateway → a fake Gemini API replaying recorded
 * `generateContent` responses and `streamGenerateContent?alt=sse` streams: the shared
 * native-provider contract (`native-contract.ts`) with what Gemini's recordings say, then what
 * only Gemini needs (thought signatures, finish reasons Anthropic has no recording of).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BadRequestError, InternalServerError, RateLimitError } from 'openai'
import { thoughtSignatureOf } from '../../../src/providers/gemini/tool-call-ids.ts'
import { type GeminiFixture, startFakeGemini } from '../../support/fake-gemini.ts'
import {
  expectOpenAIStreamShape,
  type NativeBed,
  readRawStream,
  rejection,
  startNativeBed,
  userMessage,
  WEATHER_TOOLS,
} from '../../support/native-bed.ts'
import { describeNativeContract } from '../../support/native-contract.ts'
import { validateResponse } from '../../support/openai-schemas.ts'

const API_KEY = 'AIzaSyE2eProviderKey0123456789abcdefgh'

const FIXTURES: readonly GeminiFixture[] = [
  'text',
  'tool',
  'two-tools',
  'stream-error',
  'truncated',
  'max-tokens',
  'safety',
  'prompt-blocked',
  'invalid-argument',
  'api-key-invalid',
  'permission-denied',
  'not-found',
  'resource-exhausted',
  'internal',
  'unavailable',
]

/** Gemini completion = candidates + thoughts (OpenAI counts reasoning inside it); total = totalTokenCount. */
const usage = (prompt: number, candidates: number, thoughts: number, total: number) => ({
  prompt_tokens: prompt,
  completion_tokens: candidates + thoughts,
  total_tokens: total,
  completion_tokens_details: { reasoning_tokens: thoughts },
})

/** Gemini calls have no ids: the gateway makes them, carrying the part's thought signature if any. */
const call = (name: string, args: unknown, signature?: string) => ({ name, args, signature })

const EXPECTED = {
  text: {
    stream: {
      content: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y',
      calls: [],
      finish: 'stop',
      usage: usage(9, 23, 185, 217),
    },
    json: {
      content: "There are **3** r's in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.",
      calls: [],
      finish: 'stop',
      usage: usage(9, 28, 244, 281),
    },
  },
  // finishReason is STOP even for a call: the gateway reports tool_calls.
  tool: {
    stream: {
      content: '',
      calls: [
        call(
          'weather',
          { location: 'San Francisco' },
          'EqUCCqICAb4+9vsh8Pd5taZVoPzSvjWWwzBrvhEQWBLCGa7IdY8FBMm7Z6dCKFU3Ft0la15gF7RaHe1NlPRygQec0bFwPDfMwGc',
        ),
      ],
      finish: 'tool_calls',
      usage: usage(29, 15, 45, 89),
    },
    json: {
      content: null,
      calls: [call('weather', { location: 'San Francisco' }, 'EskgCsYgAb4+9vtF7/499YQS2bjZs3xcQI')],
      finish: 'tool_calls',
      usage: usage(29, 15, 893, 937),
    },
  },
  // A thought summary (skipped), text, then two functionCall parts, the first one signed.
  'two-tools': {
    stream: {
      content: 'Checking the weather in both cities.',
      calls: [
        call('get_weather', { city: 'Paris', unit: 'c' }, 'CiQB0e2Kb+/9Xz=='),
        call('get_weather', { city: 'London' }),
      ],
      finish: 'tool_calls',
      usage: usage(41, 31, 40, 112),
    },
    json: {
      content: 'Checking the weather in both cities.',
      calls: [
        call('get_weather', { city: 'Paris', unit: 'c' }, 'CiQB0e2Kb+/9Xz=='),
        call('get_weather', { city: 'London' }),
      ],
      finish: 'tool_calls',
      usage: usage(41, 31, 40, 112),
    },
  },
} as const

const CALL_ID = /^call_[0-9a-f]{24}(_ts[0-2][A-Za-z0-9_-]+)?$/

/** Name, parsed arguments and the carried signature of each call; ids checked for shape and uniqueness. */
function callsOf(toolCalls: Array<{ id: string; function: { name: string; arguments: string } }> = []) {
  for (const c of toolCalls) expect(c.id).toMatch(CALL_ID)
  expect(new Set(toolCalls.map((c) => c.id)).size).toBe(toolCalls.length)
  return toolCalls.map((c) =>
    call(c.function.name, JSON.parse(c.function.arguments), thoughtSignatureOf(c.id)),
  )
}

let bed: NativeBed<GeminiFixture>
beforeAll(async () => {
  bed = await startNativeBed({
    prefix: 'google',
    kind: 'gemini',
    apiKey: API_KEY,
    start: startFakeGemini,
    fixtures: FIXTURES,
    // No vision, audio_input or logprobs; OpenAI's 0–2 temperature.
    model: {
      features: [
        'streaming',
        'tools',
        'parallel_tool_calls',
        'json_mode',
        'json_schema',
        'n',
        'system_messages',
      ],
    },
  })
})
afterAll(() => bed.stop())

describeNativeContract({
  prefix: 'google',
  apiKey: API_KEY,
  bed: () => bed,
  expected: EXPECTED,
  callsOf,
  httpErrors: [
    ['internal', 502, 'upstream_error', InternalServerError],
    ['invalid-argument', 400, 'upstream_invalid_request', BadRequestError],
    ['api-key-invalid', 502, 'upstream_auth_failed', InternalServerError],
    ['permission-denied', 502, 'upstream_auth_failed', InternalServerError],
    ['not-found', 502, 'upstream_not_found', InternalServerError],
    ['resource-exhausted', 429, 'upstream_rate_limited', RateLimitError],
    ['unavailable', 503, 'upstream_overloaded', InternalServerError],
  ],
  refused: [
    ['logprobs', { logprobs: true }, 'logprobs'],
    ['top_logprobs', { top_logprobs: 2 }, 'top_logprobs'],
    [
      'an image part (no vision)',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            ],
          },
        ],
      },
      'messages[0].content[1]',
    ],
    [
      'audio input',
      {
        messages: [
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
        ],
      },
      'messages[0].content[0]',
    ],
  ],
})

const body = (fixture: GeminiFixture, extra: Record<string, unknown> = {}) => ({
  model: `google/${fixture}`,
  messages: userMessage(),
  ...extra,
})

describe('gemini only', () => {
  test('two tool calls in one stream: indexes 0 and 1, each whole in one delta with its own id', async () => {
    const raw = await readRawStream(await bed.post(body('two-tools', { tools: WEATHER_TOOLS, stream: true })))
    const deltas = raw.events.flatMap((e) => e.choices.flatMap((c: any) => c.delta.tool_calls ?? []))
    expect(
      deltas.map((d: any) => [d.index, d.type, d.function.name, JSON.parse(d.function.arguments)]),
    ).toEqual([
      [0, 'function', 'get_weather', { city: 'Paris', unit: 'c' }],
      [1, 'function', 'get_weather', { city: 'London' }],
    ])
    expect(thoughtSignatureOf(deltas[0].id)).toBe('CiQB0e2Kb+/9Xz==')
    expect(deltas[1].id).toMatch(/^call_[0-9a-f]{24}$/)
  })

  test('a thought signature rides in the tool call id and goes back upstream with the call', async () => {
    const client = bed.client()
    const res = await client.chat.completions.create(body('two-tools', { tools: WEATHER_TOOLS }))
    const calls = res.choices[0]!.message.tool_calls as Array<{ id: string }>
    const before = bed.fake.requests().length
    await client.chat.completions.create({
      model: 'google/text',
      tools: WEATHER_TOOLS,
      messages: [
        ...userMessage('Weather in Paris and London?'),
        res.choices[0]!.message as any,
        { role: 'tool', tool_call_id: calls[0]!.id, content: '{"temp":21}' },
        { role: 'tool', tool_call_id: calls[1]!.id, content: 'rainy' },
      ],
    })
    const sent = bed.fake.requests()[before]!.body
    expect(sent.contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'Checking the weather in both cities.' },
        {
          functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'c' } },
          thoughtSignature: 'CiQB0e2Kb+/9Xz==',
        },
        { functionCall: { name: 'get_weather', args: { city: 'London' } } },
      ],
    })
    // Gemini matches results by function name; OpenAI by id.
    expect(sent.contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { content: { temp: 21 } } } },
        { functionResponse: { name: 'get_weather', response: { content: { result: 'rainy' } } } },
      ],
    })
  })

  test('MAX_TOKENS → finish_reason length, streamed', async () => {
    const raw = await readRawStream(
      await bed.post(body('max-tokens', { stream: true, stream_options: { include_usage: true } })),
    )
    const usageChunk = expectOpenAIStreamShape(raw, 'google/max-tokens')
    const content = raw.events.map((e) => e.choices[0]?.delta.content ?? '').join('')
    expect(content).toBe('The history of Rome')
    expect(raw.events.at(-2).choices[0].finish_reason).toBe('length')
    expect(usageChunk.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 })
  })

  test('SAFETY and a blocked prompt → finish_reason content_filter, streamed or not', async () => {
    for (const [fixture, content] of [
      ['safety', "I can't"],
      ['prompt-blocked', null],
    ] as const) {
      const res = await bed.client().chat.completions.create(body(fixture))
      expect(validateResponse(res)).toBeNull()
      expect(res.choices[0]!.message.content).toBe(content)
      expect(res.choices[0]!.finish_reason).toBe('content_filter')
      const final = await bed.client().chat.completions.stream(body(fixture)).finalChatCompletion()
      expect(final.choices[0]!.message.content).toBe(content)
      expect(final.choices[0]!.finish_reason).toBe('content_filter')
    }
  })

  test('the upstream gets the model in the URL, the key in a header, and the mapped request', async () => {
    const before = bed.fake.requests().length
    await bed.client().chat.completions.create({
      model: 'google/text',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 1.5,
      n: 2,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' } } },
      stop: 'END',
      tools: WEATHER_TOOLS,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    })
    const sent = bed.fake.requests().slice(before)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.path).toBe('/v1beta/models/text:generateContent')
    expect(sent[0]!.headers['x-goog-api-key']).toBe(API_KEY)
    expect(sent[0]!.path).not.toContain(API_KEY)
    expect(sent[0]!.body).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'The weather in a city',
              parametersJsonSchema: WEATHER_TOOLS[0]!.function.parameters,
            },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      generationConfig: {
        temperature: 1.5,
        // Issue 22: no maxOutputTokens default (Gemini applies its own); it used to be sent.
        stopSequences: ['END'],
        candidateCount: 2,
        responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object' },
      },
    })
    const stream = bed.fake.requests().length
    await bed.client().chat.completions.stream(body('text')).finalChatCompletion()
    expect(bed.fake.requests()[stream]!.path).toBe('/v1beta/models/text:streamGenerateContent?alt=sse')
  })

  test('the 429 carries Google’s RetryInfo delay as retry-after, streamed or not', async () => {
    for (const stream of [false, true]) {
      const err = await rejection(
        bed.client().chat.completions.create({ ...body('resource-exhausted'), stream } as any),
        API_KEY,
      )
      expect(err.status).toBe(429)
      expect(err.headers?.get('retry-after')).toBe('37')
    }
  })

  test('a rejected key is the operator’s problem: 502 without Google’s text about the key', async () => {
    const err = await rejection(bed.client().chat.completions.create(body('api-key-invalid')), API_KEY)
    expect(err.message).toContain('operator')
    expect(err.message).not.toContain('API key not valid')
  })
})
