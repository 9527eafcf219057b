import { describe, expect, test } from 'bun:test'
import type { ChatRequest } from '../../../src/operations/chat.ts'
import { convertToGeminiRequest } from '../../../src/providers/gemini/convert-to-gemini-request.ts'
import { readGeminiParts } from '../../../src/providers/gemini/read-gemini-parts.ts'
import { thoughtSignatureOf, toolCallId } from '../../../src/providers/gemini/tool-call-ids.ts'
import { GatewayError } from '../../../src/util/errors.ts'
import { CONVERSATION, CONVERSATION_BODY, WEATHER } from './conversation.ts'

const convert = (req: Partial<ChatRequest>) =>
  JSON.parse(
    JSON.stringify(
      convertToGeminiRequest({ model: 'gemini-x', messages: [{ role: 'user', content: 'Hi' }], ...req }),
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

describe('convertToGeminiRequest', () => {
  test('translates a conversation with system, images, tools, tool calls, tool results and stop sequences exactly', () => {
    expect(convert(CONVERSATION)).toEqual(CONVERSATION_BODY)
  })

  test('a plain request has only contents', () => {
    expect(convert({})).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] })
  })

  test.each([
    ['auto', { mode: 'AUTO' }],
    ['none', { mode: 'NONE' }],
    ['required', { mode: 'ANY' }],
    [
      { type: 'function', function: { name: 'get_weather' } },
      { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    ],
  ] as const)('tool_choice %j → %j', (choice, expected) => {
    const body = convert({ tools: [WEATHER], tool_choice: choice as ChatRequest['tool_choice'] })
    expect(body.toolConfig).toEqual({ functionCallingConfig: expected })
  })

  test('without tool_choice there is no toolConfig', () => {
    expect(convert({ tools: [WEATHER] }).toolConfig).toBeUndefined()
  })

  test('response_format json_object → JSON MIME type; json_schema → plus the schema', () => {
    expect(convert({ response_format: { type: 'json_object' } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
    })
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: false }
    expect(
      convert({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema, strict: true } } })
        .generationConfig,
    ).toEqual({ responseMimeType: 'application/json', responseJsonSchema: schema })
    expect(convert({ response_format: { type: 'text' } }).generationConfig).toBeUndefined()
  })

  test('generation parameters: max_completion_tokens wins, n, seed, penalties, a single stop string', () => {
    expect(
      convert({
        max_tokens: 100,
        max_completion_tokens: 50,
        n: 3,
        seed: 7,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        stop: 'END',
      }).generationConfig,
    ).toEqual({
      maxOutputTokens: 50,
      candidateCount: 3,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      stopSequences: ['END'],
    })
  })

  test('audio and PDF parts become inlineData', () => {
    const body = convert({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } },
          ],
        },
      ],
    })
    expect(body.contents[0].parts).toEqual([
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
    ])
  })

  test('a tool call id minted from a Gemini thought signature gives the signature back', () => {
    const signature = 'CiQB0e2Kb+/9Xz=='
    const id = toolCallId(signature)
    expect(id).toMatch(/^call_[0-9a-f]{24}_ts2[A-Za-z0-9_-]+$/)
    expect(thoughtSignatureOf(id)).toBe(signature)
    const body = convert({
      messages: [
        { role: 'user', content: 'Weather in Paris and London?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            {
              id: toolCallId(),
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"London"}' },
            },
          ],
        },
      ],
    })
    expect(body.contents[1].parts).toEqual([
      { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: signature },
      { functionCall: { name: 'get_weather', args: { city: 'London' } } },
    ])
  })

  test('the response side mints ids that carry the signature of the part', () => {
    const { toolCalls } = readGeminiParts([
      { functionCall: { name: 'f', args: {} }, thoughtSignature: 'EqUCCq/+AB' },
      { functionCall: { name: 'g' } },
    ])
    expect(thoughtSignatureOf(toolCalls[0]!.id)).toBe('EqUCCq/+AB')
    expect(toolCalls[1]!.id).toMatch(/^call_[0-9a-f]{24}$/)
    expect(toolCalls[1]!.function.arguments).toBe('{}')
  })

  test('a tool message whose id matches no earlier call → 400 naming tool_call_id', () => {
    const err = thrown(() =>
      convert({
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'tool', tool_call_id: 'nope', content: 'x' },
        ],
      }),
    )
    expect(err.status).toBe(400)
    expect(err.param).toBe('messages[1].tool_call_id')
  })

  test('invalid tool call arguments → 400 naming the parameter', () => {
    const err = thrown(() =>
      convert({
        messages: [
          { role: 'user', content: 'Hi' },
          {
            role: 'assistant',
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '[1,2]' } }],
          },
        ],
      }),
    )
    expect(err.status).toBe(400)
    expect(err.param).toBe('messages[1].tool_calls[0].function.arguments')
  })

  test('an image URL that is neither http(s) nor a base64 data URL → 400 naming it', () => {
    const err = thrown(() =>
      convert({
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,raw' } }] },
        ],
      }),
    )
    expect(err.param).toBe('messages[0].content[0].image_url.url')
  })

  test('logprobs is not sent: it is a kind limit, refused by the feature check before any adapter', () => {
    const body = convert({ logprobs: true, top_logprobs: 2 }) as unknown as Record<string, unknown>
    expect(JSON.stringify(body)).not.toContain('logprobs')
  })
})

describe('reasoning_effort → generationConfig.thinkingConfig', () => {
  test.each([
    ['minimal', 1024],
    ['low', 1024],
    ['medium', 8192],
    ['high', 24_576],
    ['xhigh', 24_576],
  ] as const)('%s → thinkingBudget %d with thought summaries', (effort, budget) => {
    expect(convert({ reasoning_effort: effort }).generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: budget, includeThoughts: true },
    })
  })

  test('none → thinkingBudget 0 (thinking off; an always_reasons model never gets here)', () => {
    expect(convert({ reasoning_effort: 'none' }).generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 0 },
    })
  })

  test('absent → no thinkingConfig (the model decides)', () => {
    expect(convert({})).not.toHaveProperty('generationConfig')
  })

  test('beside the other generation parameters', () => {
    expect(
      convert({ reasoning_effort: 'low', max_completion_tokens: 4000, temperature: 0.2 }).generationConfig,
    ).toEqual({
      temperature: 0.2,
      maxOutputTokens: 4000,
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    })
  })

  test('an unknown effort → 400 invalid_value naming reasoning_effort', () => {
    const err = thrown(() => convert({ reasoning_effort: 'max' }))
    expect(err).toMatchObject({ status: 400, code: 'invalid_value', param: 'reasoning_effort' })
  })
})
