/**
 * The official `openai` client → the real gateway → a fake Anthropic replaying recorded Messages
 * API responses and streams: the shared native-provider contract (`native-contract.ts`) with what
 * Anthropic's recordings say, then what only Anthropic needs.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BadRequestError, InternalServerError, RateLimitError } from 'openai'
import { type AnthropicFixture, startFakeAnthropic } from '../../support/fake-anthropic.ts'
import {
  type NativeBed,
  readRawStream,
  rejection,
  startNativeBed,
  WEATHER_TOOLS,
} from '../../support/native-bed.ts'
import { describeNativeContract } from '../../support/native-contract.ts'

const API_KEY = 'sk-ant-api03-e2e-provider-key-0123456789'

const FIXTURES: readonly AnthropicFixture[] = [
  'text',
  'tool',
  'two-tools',
  'stream-error',
  'truncated',
  'invalid-request',
  'authentication',
  'permission',
  'not-found',
  'rate-limit',
  'api-error',
  'overloaded',
]

/** Anthropic prompt = input + cache creation + cache read; completion = the final output_tokens. */
const usage = (input: number, creation: number, read: number, output: number) => ({
  prompt_tokens: input + creation + read,
  completion_tokens: output,
  total_tokens: input + creation + read + output,
  prompt_tokens_details: { cached_tokens: read },
})

const call = (id: string, name: string, args: unknown) => ({ id, name, args })

/** What each recording says, in OpenAI terms. */
const EXPECTED = {
  text: {
    stream: {
      content:
        "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
      calls: [],
      finish: 'stop',
      usage: usage(12, 0, 0, 30),
    },
    json: { content: 'Hello!', calls: [], finish: 'stop', usage: usage(10, 0, 0, 5) },
  },
  tool: {
    stream: {
      content: '',
      calls: [
        call('toolu_01KFbKqPYSuAKujiL6mTfzYA', 'json', {
          elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }],
        }),
      ],
      finish: 'tool_calls',
      usage: usage(849, 0, 0, 47),
    },
    json: {
      content: null,
      calls: [
        call('toolu_01Q9ExVZnzZj7E2QQYHYtNUa', 'json', {
          elements: [
            { location: 'San Francisco', temperature: -5, condition: 'snowy' },
            { location: 'London', temperature: 0, condition: 'snowy' },
            { location: 'Paris', temperature: 23, condition: 'cloudy' },
            { location: 'Berlin', temperature: -9, condition: 'snowy' },
          ],
        }),
      ],
      finish: 'tool_calls',
      usage: usage(1151, 0, 0, 87),
    },
  },
  // A thinking block first (reasoning_content, not compared here), then text, then two tool_use
  // blocks (Anthropic block indexes 2 and 3, OpenAI tool call indexes 0 and 1); stream and
  // response say the same.
  'two-tools': {
    stream: {
      content: "I'll check both cities.",
      calls: [
        call('toolu_01ParisWeather', 'get_weather', { city: 'Paris', unit: 'c' }),
        call('toolu_01LondonWeather', 'get_weather', { city: 'London' }),
      ],
      finish: 'tool_calls',
      usage: usage(25, 100, 200, 89),
    },
    json: {
      content: "I'll check both cities.",
      calls: [
        call('toolu_01ParisWeather', 'get_weather', { city: 'Paris', unit: 'c' }),
        call('toolu_01LondonWeather', 'get_weather', { city: 'London' }),
      ],
      finish: 'tool_calls',
      usage: usage(25, 100, 200, 89),
    },
  },
} as const

const callsOf = (toolCalls: Array<{ id: string; function: { name: string; arguments: string } }> = []) =>
  toolCalls.map((c) => call(c.id, c.function.name, JSON.parse(c.function.arguments)))

let bed: NativeBed<AnthropicFixture>
beforeAll(async () => {
  bed = await startNativeBed({
    prefix: 'anthropic',
    kind: 'anthropic',
    apiKey: API_KEY,
    start: startFakeAnthropic,
    fixtures: FIXTURES,
    // No json_mode, json_schema, n, logprobs or audio_input; Anthropic's 0–1 temperature.
    model: {
      features: ['streaming', 'tools', 'parallel_tool_calls', 'vision', 'system_messages'],
      temperature: { min: 0, max: 1 },
    },
  })
})
afterAll(() => bed.stop())

describeNativeContract({
  prefix: 'anthropic',
  apiKey: API_KEY,
  bed: () => bed,
  expected: EXPECTED,
  callsOf,
  httpErrors: [
    ['api-error', 502, 'upstream_error', InternalServerError],
    ['invalid-request', 400, 'upstream_invalid_request', BadRequestError],
    ['authentication', 502, 'upstream_auth_failed', InternalServerError],
    ['permission', 502, 'upstream_permission_denied', InternalServerError],
    ['not-found', 502, 'upstream_not_found', InternalServerError],
    ['rate-limit', 429, 'upstream_rate_limited', RateLimitError],
    ['overloaded', 503, 'upstream_overloaded', InternalServerError],
  ],
  refused: [
    ['json mode', { response_format: { type: 'json_object' } }, 'response_format'],
    [
      'json schema',
      { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } } },
      'response_format',
    ],
    ['n > 1', { n: 2 }, 'n'],
    ['logprobs', { logprobs: true }, 'logprobs'],
    ['top_logprobs', { top_logprobs: 2 }, 'top_logprobs'],
    ['temperature above the model range', { temperature: 1.5 }, 'temperature'],
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

describe('anthropic only', () => {
  test('two tool calls in one stream: indexes 0 and 1, ids and names first, then argument fragments', async () => {
    const raw = await readRawStream(
      await bed.post({
        model: 'anthropic/two-tools',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      }),
    )
    const deltas = raw.events.flatMap((e) => e.choices.flatMap((c: any) => c.delta.tool_calls ?? []))
    expect(deltas.filter((d: any) => d.id)).toEqual([
      {
        index: 0,
        id: 'toolu_01ParisWeather',
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      },
      {
        index: 1,
        id: 'toolu_01LondonWeather',
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      },
    ])
    const args = (index: number) =>
      deltas
        .filter((d: any) => d.index === index)
        .map((d: any) => d.function?.arguments ?? '')
        .join('')
    expect(JSON.parse(args(0))).toEqual({ city: 'Paris', unit: 'c' })
    expect(JSON.parse(args(1))).toEqual({ city: 'London' })
  })

  test('the upstream gets the model without the prefix, the provider key, and the mapped request', async () => {
    const before = bed.fake.requests().length
    await bed.client().chat.completions.create({
      model: 'anthropic/text',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 0.3,
      stop: 'END',
      tools: WEATHER_TOOLS,
      tool_choice: 'required',
      parallel_tool_calls: false,
    })
    const sent = bed.fake.requests().slice(before)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.path).toBe('/v1/messages')
    expect(sent[0]!.headers['x-api-key']).toBe(API_KEY)
    expect(sent[0]!.headers.authorization).toBeUndefined()
    expect(sent[0]!.body).toEqual({
      model: 'text',
      max_tokens: 8192,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      tools: [
        {
          name: 'get_weather',
          description: 'The weather in a city',
          input_schema: WEATHER_TOOLS[0]!.function.parameters,
        },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      temperature: 0.3,
      stop_sequences: ['END'],
    })
  })

  test('top_p beside the default temperature: the temperature is left out (Claude refuses both)', async () => {
    const before = bed.fake.requests().length
    await bed.client().chat.completions.create({
      model: 'anthropic/text',
      messages: [{ role: 'user', content: 'Hi' }],
      top_p: 0.5,
    })
    const sent = bed.fake.requests()[before]!.body
    expect(sent.top_p).toBe(0.5)
    expect('temperature' in sent).toBe(false)
  })

  test('a provider message that names a key loses it', async () => {
    const err = await rejection(
      bed.client().chat.completions.create({
        model: 'anthropic/permission',
        messages: [{ role: 'user', content: 'Hi' }],
      }),
      API_KEY,
    )
    expect(err.message).toContain('operator')
    expect(err.message).not.toContain('sk-ant-api03-FAKEFAKEFAKE')
  })

  test('the 429 keeps the provider retry-after, streamed or not', async () => {
    for (const stream of [false, true]) {
      const err = await rejection(
        bed.client().chat.completions.create({
          model: 'anthropic/rate-limit',
          messages: [{ role: 'user', content: 'Hi' }],
          stream,
        } as any),
        API_KEY,
      )
      expect(err.headers?.get('retry-after')).toBe('7')
    }
  })
})
