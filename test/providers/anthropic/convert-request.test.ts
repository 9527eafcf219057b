import { describe, expect, test } from 'bun:test'
import type { ChatRequest } from '../../../src/operations/chat.ts'
import { convertToAnthropicRequest } from '../../../src/providers/anthropic/convert-to-anthropic-request.ts'
import { GatewayError } from '../../../src/util/errors.ts'
import { CONVERSATION, CONVERSATION_BODY, WEATHER } from './conversation.ts'

const convert = (req: Partial<ChatRequest>, stream = false) =>
  JSON.parse(
    JSON.stringify(
      convertToAnthropicRequest(
        { model: 'claude-x', messages: [{ role: 'user', content: 'Hi' }], ...req },
        {
          stream,
          defaultMaxTokens: 4096,
        },
      ),
    ),
  )

function thrown(fn: () => unknown): GatewayError {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError)
    return err as GatewayError
  }
  throw new Error('expected a GatewayError')
}

describe('convertToAnthropicRequest', () => {
  test('translates a conversation with system, images, tools, tool calls, tool results and stop sequences exactly', () => {
    expect(convert(CONVERSATION)).toEqual(CONVERSATION_BODY)
  })

  test('a single system message stays a string; stream adds stream: true', () => {
    const body = convert(
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      },
      true,
    )
    expect(body).toEqual({
      model: 'claude-x',
      max_tokens: 4096,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      stream: true,
    })
  })

  test('max_completion_tokens wins over max_tokens; a single stop string becomes a list', () => {
    const body = convert({ max_tokens: 100, max_completion_tokens: 50, stop: 'END' })
    expect(body.max_tokens).toBe(50)
    expect(body.stop_sequences).toEqual(['END'])
  })

  test('the default temperature 1 is left out beside top_p (recent models refuse both); any other is sent', () => {
    expect(convert({ temperature: 1, top_p: 0.5 })).toMatchObject({ top_p: 0.5 })
    expect(convert({ temperature: 1, top_p: 0.5 }).temperature).toBeUndefined()
    expect(convert({ temperature: 1 }).temperature).toBe(1)
    expect(convert({ temperature: 0.2, top_p: 0.5 })).toMatchObject({ temperature: 0.2, top_p: 0.5 })
  })

  test('consecutive same-role turns are merged and empty text is dropped', () => {
    const body = convert({
      messages: [
        { role: 'user', content: 'one' },
        {
          role: 'user',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: 'two' },
          ],
        },
        { role: 'assistant', content: '' },
        { role: 'assistant', content: 'three' },
        { role: 'assistant', content: 'four' },
      ],
    })
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'three' },
          { type: 'text', text: 'four' },
        ],
      },
    ])
  })

  test.each([
    ['auto', 'auto', false, { type: 'auto' }],
    ['auto, serial', 'auto', true, { type: 'auto', disable_parallel_tool_use: true }],
    ['unset, serial', undefined, true, { type: 'auto', disable_parallel_tool_use: true }],
    ['unset', undefined, false, undefined],
    ['none, serial', 'none', true, { type: 'none' }],
    ['required', 'required', false, { type: 'any' }],
    ['required, serial', 'required', true, { type: 'any', disable_parallel_tool_use: true }],
    [
      'named',
      { type: 'function', function: { name: 'get_weather' } },
      false,
      { type: 'tool', name: 'get_weather' },
    ],
  ] as const)('tool_choice %s', (_label, choice, serial, expected) => {
    const body = convert({
      tools: [WEATHER],
      tool_choice: choice as ChatRequest['tool_choice'],
      ...(serial ? { parallel_tool_calls: false } : {}),
    })
    expect(body.tool_choice).toEqual(expected)
  })

  test('tool results come first in their user turn, even when a user message came before them', () => {
    const body = convert({
      messages: [
        { role: 'user', content: 'Time?' },
        {
          role: 'assistant',
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'now', arguments: '{}' } }],
        },
        { role: 'user', content: 'Hurry.' },
        { role: 'tool', tool_call_id: 't1', content: '12:00' },
      ],
    })
    expect(body.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: '12:00' },
        { type: 'text', text: 'Hurry.' },
      ],
    })
  })

  test('a PDF file part becomes a document block', () => {
    const body = convert({
      messages: [
        {
          role: 'user',
          content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } }],
        },
      ],
    })
    expect(body.messages[0].content).toEqual([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
    ])
  })

  test('invalid tool call arguments → 400 naming the parameter', () => {
    const err = thrown(() =>
      convert({
        messages: [
          { role: 'user', content: 'Hi' },
          {
            role: 'assistant',
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }],
          },
        ],
      }),
    )
    expect(err.status).toBe(400)
    expect(err.param).toBe('messages[1].tool_calls[0].function.arguments')
  })

  test('empty tool call arguments mean no arguments', () => {
    const body = convert({
      messages: [
        { role: 'user', content: 'Hi' },
        {
          role: 'assistant',
          tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '' } }],
        },
      ],
    })
    expect(body.messages[1].content).toEqual([{ type: 'tool_use', id: 't', name: 'f', input: {} }])
  })

  test('an image URL that is neither http(s) nor a base64 data URL → 400 naming it', () => {
    const err = thrown(() =>
      convert({
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/cat.png' } }] }],
      }),
    )
    expect(err.status).toBe(400)
    expect(err.param).toBe('messages[0].content[0].image_url.url')
  })

  test('audio parts → 400 unsupported_feature', () => {
    const err = thrown(() =>
      convert({
        messages: [
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
        ],
      }),
    )
    expect(err.code).toBe('unsupported_feature')
    expect(err.param).toBe('messages[0].content[0]')
  })

  test.each([
    [{ response_format: { type: 'json_object' } }, 'response_format'],
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }, 'response_format'],
  ] as const)('%j → 400 unsupported_feature', (extra, param) => {
    const err = thrown(() => convert(extra as Partial<ChatRequest>))
    expect(err.status).toBe(400)
    expect(err.code).toBe('unsupported_feature')
    expect(err.param).toBe(param)
  })

  test('response_format json_schema → output_config.format with the schema alone (structured outputs)', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
      additionalProperties: false,
    }
    const body = convert({
      response_format: { type: 'json_schema', json_schema: { name: 'thing', schema, strict: true } },
    })
    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema } })
  })

  test('n and logprobs are not sent: they are kind limits, refused by the feature check before any adapter', () => {
    const body = convert({ n: 2, logprobs: true, top_logprobs: 3 })
    expect(JSON.stringify(body)).not.toContain('logprobs')
    expect(body).not.toHaveProperty('n')
  })

  test('response_format text, n = 1 and logprobs false are accepted and not sent', () => {
    const body = convert({ response_format: { type: 'text' }, n: 1, logprobs: false })
    expect(body).toEqual({
      model: 'claude-x',
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    })
  })
})

describe('reasoning_effort → thinking', () => {
  test.each([
    ['minimal', 1024],
    ['low', 1024],
    ['medium', 8192],
    ['high', 24_576],
    ['xhigh', 32_000],
  ] as const)('%s → budget_tokens %d when max_tokens leaves room', (effort, budget) => {
    const body = convert({ reasoning_effort: effort, max_tokens: 64_000 })
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: budget })
    expect(body.max_tokens).toBe(64_000)
  })

  test.each([
    [{ max_tokens: 4096 }, 4096, 3072],
    [{ max_completion_tokens: 2000 }, 2000, 1500],
    [{ max_tokens: 1025 }, 1025, 1024],
    [{}, 4096, 3072], // the model's maximum (defaultMaxTokens)
  ] as const)(
    '%j: max_tokens %d kept, the budget lowered to %d (¾ of it, at least 1,024)',
    (limits, max, budget) => {
      const body = convert({ reasoning_effort: 'high', ...limits })
      expect(body.max_tokens).toBe(max)
      expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: budget })
      expect(body.thinking.budget_tokens).toBeLessThan(body.max_tokens)
    },
  )

  test('the next step of a tool loop (the last assistant turn called tools, their results follow): no thinking, nothing refused for it', () => {
    // Anthropic wants that turn to open with its signed thinking block, which a translated history
    // cannot carry; sent with thinking, Anthropic refuses every such request.
    const loop: Partial<ChatRequest> = {
      reasoning_effort: 'medium',
      max_tokens: 4096,
      temperature: 0.2,
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18 C' },
      ],
    }
    const body = convert(loop)
    expect(body).not.toHaveProperty('thinking')
    expect(body.temperature).toBe(0.2)
    // The next user message starts a new turn: thinking again.
    const next = convert({
      ...loop,
      temperature: undefined,
      messages: [
        ...loop.messages!,
        { role: 'assistant', content: '18 C in Paris.' },
        { role: 'user', content: 'And Oslo?' },
      ],
    })
    expect(next.thinking).toEqual({ type: 'enabled', budget_tokens: 3072 })
  })

  test('none, null or absent: no thinking', () => {
    for (const reasoning_effort of ['none', null, undefined]) {
      expect(convert({ reasoning_effort, max_tokens: 8000 })).not.toHaveProperty('thinking')
    }
  })

  test('temperature 1 is left out while thinking; top_p from 0.95 is sent; auto and none tool choices pass', () => {
    const body = convert({
      reasoning_effort: 'low',
      temperature: 1,
      top_p: 0.95,
      tools: [WEATHER],
      tool_choice: 'auto',
    })
    expect(body).not.toHaveProperty('temperature')
    expect(body.top_p).toBe(0.95)
    expect(body.tool_choice).toEqual({ type: 'auto' })
    expect(convert({ reasoning_effort: 'low', tools: [WEATHER], tool_choice: 'none' }).tool_choice).toEqual({
      type: 'none',
    })
  })

  test.each([
    ['temperature', { temperature: 0.3 }],
    ['top_p', { top_p: 0.9 }],
    ['tool_choice', { tools: [WEATHER], tool_choice: 'required' }],
    [
      'tool_choice',
      { tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'get_weather' } } },
    ],
    [
      'messages',
      {
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
        ],
      },
    ],
  ] as const)(
    '%s that Anthropic refuses beside thinking → 400 unsupported_feature naming it',
    (param, extra) => {
      const err = thrown(() => convert({ reasoning_effort: 'medium', ...(extra as Partial<ChatRequest>) }))
      expect(err.status).toBe(400)
      expect(err.code).toBe('unsupported_feature')
      expect(err.param).toBe(param)
      // Without thinking the same request is sent.
      expect(() => convert(extra as Partial<ChatRequest>)).not.toThrow()
    },
  )

  test('a max_tokens of 1,024 or less leaves no room to think → 400 invalid_value naming the field sent', () => {
    const err = thrown(() => convert({ reasoning_effort: 'low', max_tokens: 1024 }))
    expect(err).toMatchObject({ status: 400, code: 'invalid_value', param: 'max_tokens' })
    expect(thrown(() => convert({ reasoning_effort: 'low', max_completion_tokens: 800 })).param).toBe(
      'max_completion_tokens',
    )
  })

  test('an unknown effort → 400 invalid_value naming reasoning_effort', () => {
    const err = thrown(() => convert({ reasoning_effort: 'max', max_tokens: 8000 }))
    expect(err).toMatchObject({ status: 400, code: 'invalid_value', param: 'reasoning_effort' })
  })
})
