import { describe, expect, test } from 'bun:test'
import { checkFeatures } from '../../../src/catalogue/features.ts'
import type { ModelConfig } from '../../../src/config/schema.ts'
import { FEATURES, type Feature } from '../../../src/config/schema-providers.ts'
import { validateChatRequest } from '../../../src/surfaces/chat/validate.ts'
import { detectFeatures } from '../../../src/surfaces/shared/chat-features.ts'
import type { ChatRequestInput } from '../../../src/surfaces/shared/chat-request-schema.ts'
import { gatewayError, model, modelWithout, request } from '../chat/helpers.ts'

/** The chat surface's feature check, as the pipeline runs it. */
const checkModelSupport = (req: ChatRequestInput, m: ModelConfig, id: string) =>
  checkFeatures(detectFeatures(req), req.temperature, m, id)

const input = (fields: Record<string, unknown>) => validateChatRequest(request(fields)) as ChatRequestInput
const user = (content: unknown) => ({ role: 'user', content })
const toolCall = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }
const tools = [{ type: 'function', function: { name: 'f' } }]

/** For every feature, requests that use it and the `param` the check must name. */
const USES: Array<[Feature, string, Record<string, unknown>]> = [
  ['streaming', 'stream', { stream: true }],
  ['tools', 'tools', { tools }],
  [
    'tools',
    'messages[1].tool_calls',
    { messages: [user('x'), { role: 'assistant', tool_calls: [toolCall] }] },
  ],
  [
    'tools',
    'messages[1].role',
    { messages: [user('x'), { role: 'tool', tool_call_id: 'c1', content: 'ok' }] },
  ],
  ['parallel_tool_calls', 'parallel_tool_calls', { tools, parallel_tool_calls: true }],
  [
    'vision',
    'messages[0].content[1]',
    {
      messages: [
        user([
          { type: 'text', text: 'x' },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
        ]),
      ],
    },
  ],
  [
    'audio_input',
    'messages[0].content[0]',
    { messages: [user([{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }])] },
  ],
  ['json_mode', 'response_format', { response_format: { type: 'json_object' } }],
  [
    'json_schema',
    'response_format',
    { response_format: { type: 'json_schema', json_schema: { name: 'x' } } },
  ],
  ['logprobs', 'logprobs', { logprobs: true }],
  ['logprobs', 'top_logprobs', { top_logprobs: 2 }],
  ['n', 'n', { n: 2 }],
  ['system_messages', 'messages[0].role', { messages: [{ role: 'system', content: 'x' }, user('y')] }],
  ['system_messages', 'messages[1].role', { messages: [user('y'), { role: 'developer', content: 'x' }] }],
  ['reasoning', 'reasoning_effort', { reasoning_effort: 'low' }],
]

test('every feature in the vocabulary has a case (prefill is never used by a request: below)', () => {
  expect(new Set(USES.map(([feature]) => feature))).toEqual(new Set(FEATURES.filter((f) => f !== 'prefill')))
})

test('prefill is never detected: a request ending with an assistant message goes to a model without it', () => {
  const fields = { messages: [user('Say a word'), { role: 'assistant', content: 'The word is' }] }
  expect(detectFeatures(input(fields)).map((u) => u.feature)).not.toContain('prefill')
  expect(() => checkModelSupport(input(fields), modelWithout('prefill'), 'demo/m')).not.toThrow()
})

describe.each(USES)('%s via %s', (feature, param, fields) => {
  test('is detected', () => {
    expect(detectFeatures(input(fields))).toContainEqual({ feature, param })
  })

  test('a model without it → 400 unsupported_feature naming the field, the model and what to do', () => {
    const error = gatewayError(() => checkModelSupport(input(fields), modelWithout(feature), 'demo/m'), {
      code: 'unsupported_feature',
      param,
    })
    expect(error.message).toContain('"demo/m"')
    expect(error.message).toContain(feature)
    expect(error.message).toContain('GET /v1/models')
  })

  test('a model with it (and nothing else the request uses) passes', () => {
    const needed = detectFeatures(input(fields)).map((use) => use.feature)
    expect(needed.length).toBeLessThanOrEqual(feature === 'parallel_tool_calls' ? 2 : 1)
    expect(() => checkModelSupport(input(fields), model({ features: needed }), 'demo/m')).not.toThrow()
  })
})

describe('detectFeatures', () => {
  test('a plain request uses no feature', () => {
    expect(detectFeatures(input({}))).toEqual([])
  })

  test('nothing is detected from defaults, false or null', () => {
    const fields = {
      stream: false,
      n: 1,
      logprobs: false,
      top_logprobs: null,
      parallel_tool_calls: true,
      response_format: { type: 'text' },
      messages: [user([{ type: 'text', text: 'x' }]), { role: 'assistant', tool_calls: [] }],
    }
    expect(detectFeatures(input(fields))).toEqual([])
  })

  test('a file part (a PDF) uses vision, as a Messages document block does', () => {
    const fields = {
      messages: [
        user([
          { type: 'text', text: 'x' },
          { type: 'file', file: { file_id: 'f' } },
        ]),
      ],
    }
    expect(detectFeatures(input(fields))).toEqual([{ feature: 'vision', param: 'messages[0].content[1]' }])
  })

  test('each feature once, at its first use, top-level fields before messages', () => {
    const image = { type: 'image_url', image_url: { url: 'x' } }
    const uses = detectFeatures(
      input({
        messages: [
          { role: 'system', content: 'a' },
          user([image, image]),
          { role: 'tool', tool_call_id: 'c', content: 'r' },
          { role: 'developer', content: 'b' },
        ],
        tools,
        stream: true,
      }),
    )
    expect(uses).toEqual([
      { feature: 'streaming', param: 'stream' },
      { feature: 'tools', param: 'tools' },
      { feature: 'system_messages', param: 'messages[0].role' },
      { feature: 'vision', param: 'messages[1].content[0]' },
    ])
  })
})

describe('checkModelSupport', () => {
  test('lists further missing features in the message', () => {
    const error = gatewayError(
      () => checkModelSupport(input({ stream: true, n: 3 }), model({ features: [] }), 'demo/m'),
      {
        code: 'unsupported_feature',
        param: 'stream',
      },
    )
    expect(error.message).toContain('does not support n either')
  })

  test('a temperature outside the model range → 400 unsupported_feature, param temperature', () => {
    const cold = model({ temperature: { min: 0, max: 0.5 } })
    const error = gatewayError(() => checkModelSupport(input({ temperature: 0.8 }), cold, 'demo/cold'), {
      code: 'unsupported_feature',
      param: 'temperature',
    })
    expect(error.message).toContain('0 to 0.5')
    expect(error.message).toContain('"demo/cold"')
  })

  test('temperatures at the range ends, absent or null pass', () => {
    const cold = model({ temperature: { min: 0.2, max: 0.5 } })
    for (const temperature of [0.2, 0.5, undefined, null]) {
      expect(() => checkModelSupport(input({ temperature }), cold, 'demo/cold')).not.toThrow()
    }
    gatewayError(() => checkModelSupport(input({ temperature: 0.1 }), cold, 'demo/cold'), {
      param: 'temperature',
    })
  })

  test('without a configured range, 0–2 is allowed (the schema already enforces it)', () => {
    expect(() => checkModelSupport(input({ temperature: 2 }), model(), 'demo/m')).not.toThrow()
  })

  test('features are checked before temperature', () => {
    const cold = model({ features: [], temperature: { min: 0, max: 0.5 } })
    gatewayError(() => checkModelSupport(input({ stream: true, temperature: 1 }), cold, 'demo/cold'), {
      param: 'stream',
    })
  })
})
