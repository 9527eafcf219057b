import { describe, expect, test } from 'bun:test'
import { MAX_JSON_DEPTH } from '../../../src/json/limits.ts'
import { parseJsonObject } from '../../../src/json/parse-json-body.ts'
import { findJsonSyntaxError } from '../../../src/json/syntax.ts'
import { explainValidationError } from '../../../src/json/validation-error.ts'
import { CHAT_EXAMPLE, validateChatRequest } from '../../../src/surfaces/chat/validate.ts'
import { GatewayError } from '../../../src/util/errors.ts'
import { gatewayError, request } from './helpers.ts'

/** The chat surface's parse: the JSON object, its messages quoting the chat example. */
const parseChatBody = (text: string) => parseJsonObject(text, CHAT_EXAMPLE)

const validate = (body: unknown) => () => validateChatRequest(body)
const withMessages = (...messages: unknown[]) => request({ messages })

describe('parseChatBody', () => {
  test('parses a JSON object', () => {
    expect(parseChatBody('{"model": "a/b"}')).toEqual({ model: 'a/b' })
  })

  test('ignores a leading byte order mark', () => {
    expect(parseChatBody('\uFEFF{"a": 1}')).toEqual({ a: 1 })
  })

  test('an empty body is invalid_json and says so', () => {
    const error = gatewayError(() => parseChatBody('  \n'), { code: 'invalid_json', param: null })
    expect(error.message).toContain('empty')
  })

  test.each([
    ['{"a": 1,}', 'trailing comma', 'line 1, column 8'],
    ['{\n  "model": "a/b",\n  "messages": [1, 2,]\n}', 'trailing comma', 'line 3, column 20'],
    ['{"temperature": NaN}', 'NaN', 'line 1, column 17'],
    ['{"model": "a/b"', 'truncated', 'line 1, column 16'],
    ["{'model': 'a/b'}", 'double-quoted', 'line 1, column 2'],
    ['{"a": 1} x', 'after the end', 'line 1, column 10'],
    ['{"a": "tab\there"}', 'control character', 'line 1, column 11'],
    ['{"a": "\\x"}', 'escape', 'line 1, column 8'],
    ['{"a" 1}', '":"', 'line 1, column 6'],
  ])('%j is invalid_json naming the problem and where (%s)', (text, what, where) => {
    const error = gatewayError(() => parseChatBody(text), { code: 'invalid_json', param: null })
    expect(error.message).toContain(what)
    expect(error.message).toContain(where)
  })

  test('counts the skipped byte order mark in the character offset', () => {
    const error = gatewayError(() => parseChatBody('\uFEFF{"a": NaN}'), { code: 'invalid_json' })
    expect(error.message).toContain('column 7 (character 8)')
  })

  test.each([
    ['[]', 'an array'],
    ['"hi"', 'a string'],
    ['42', 'a number'],
    ['null', 'null'],
  ])('%s is invalid_type: the body must be an object', (text, got) => {
    const error = gatewayError(() => parseChatBody(text), { code: 'invalid_type', param: null })
    expect(error.message).toContain(got)
  })

  test('the syntax scanner agrees that valid JSON has no error', () => {
    for (const text of ['{}', '[1, -2.5e3, "a\\u00e9", true, false, null, {"a": []}]', ' "x" ']) {
      expect(findJsonSyntaxError(text)).toBeNull()
    }
  })
})

describe('validateChatRequest accepts', () => {
  test('a minimal request, returned as is (no copy)', () => {
    const body = request()
    expect(validateChatRequest(body) as unknown).toBe(body)
  })

  test('every message role and content part type', () => {
    const body = withMessages(
      { role: 'system', content: 'x', name: 'sys' },
      { role: 'developer', content: [{ type: 'text', text: 'x' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'x' },
          { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'high' } },
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          { type: 'file', file: { file_id: 'file-1' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'ok' }] },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }], refusal: 'no' },
      { role: 'assistant' },
    )
    expect(() => validateChatRequest(body)).not.toThrow()
  })

  test('every known parameter with a valid value', () => {
    const body = request({
      stream: true,
      stream_options: { include_usage: true },
      temperature: 2,
      top_p: 0,
      max_tokens: 1,
      max_completion_tokens: 1,
      n: 128,
      stop: ['a', 'b', 'c', 'd'],
      tools: [
        {
          type: 'function',
          function: { name: 'get-weather_2', parameters: { type: 'object' }, strict: null },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get-weather_2' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {}, strict: true } },
      logprobs: true,
      top_logprobs: 20,
      presence_penalty: -2,
      frequency_penalty: 2,
      seed: -5,
      user: 'u',
      logit_bias: { '50256': -100 },
    })
    expect(() => validateChatRequest(body)).not.toThrow()
  })

  test('null for every optional parameter OpenAI allows null for', () => {
    const nullable = [
      'stream',
      'stream_options',
      'temperature',
      'top_p',
      'max_tokens',
      'max_completion_tokens',
      'n',
      'stop',
      'logprobs',
      'top_logprobs',
      'presence_penalty',
      'frequency_penalty',
      'seed',
      'logit_bias',
    ]
    expect(() =>
      validateChatRequest(request(Object.fromEntries(nullable.map((k) => [k, null])))),
    ).not.toThrow()
  })

  test('unknown top-level, message and content-part keys (passed through)', () => {
    const body = request({
      reasoning_effort: 'low',
      metadata: { a: 'b' },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }], x: 1 },
      ],
    })
    expect(validateChatRequest(body).reasoning_effort).toBe('low')
  })

  test('a "__proto__" key is just an unknown key', () => {
    const body = parseChatBody(
      '{"model": "a/b", "messages": [{"role": "user", "content": "x"}], "__proto__": {"n": 5}}',
    )
    expect(validateChatRequest(body).n).toBeUndefined()
  })
})

describe('validateChatRequest rejects, naming the field', () => {
  test.each<[string, Record<string, unknown>, string, string, string]>([
    ['model missing', { model: undefined }, 'missing_required_parameter', 'model', 'GET /v1/models'],
    ['model not a string', { model: 5 }, 'invalid_type', 'model', ''],
    ['messages missing', { messages: undefined }, 'missing_required_parameter', 'messages', ''],
    ['messages empty', { messages: [] }, 'invalid_value', 'messages', 'non-empty'],
    ['messages an object', { messages: { role: 'user' } }, 'invalid_type', 'messages', ''],
    ['stream a string', { stream: 'yes' }, 'invalid_type', 'stream', ''],
    ['stream_options an array', { stream_options: [] }, 'invalid_type', 'stream_options', ''],
    [
      'include_usage a string',
      { stream_options: { include_usage: 'yes' } },
      'invalid_type',
      'stream_options.include_usage',
      '',
    ],
    ['temperature above 2', { temperature: 2.5 }, 'invalid_value', 'temperature', 'between 0 and 2'],
    ['temperature negative', { temperature: -0.1 }, 'invalid_value', 'temperature', ''],
    ['temperature a numeric string', { temperature: '0.5' }, 'invalid_type', 'temperature', ''],
    ['top_p above 1', { top_p: 1.5 }, 'invalid_value', 'top_p', ''],
    ['max_tokens zero', { max_tokens: 0 }, 'invalid_value', 'max_tokens', ''],
    ['max_tokens fractional', { max_tokens: 10.5 }, 'invalid_value', 'max_tokens', 'integer'],
    [
      'max_completion_tokens a string',
      { max_completion_tokens: '10' },
      'invalid_type',
      'max_completion_tokens',
      '',
    ],
    ['n zero', { n: 0 }, 'invalid_value', 'n', ''],
    ['n above 128', { n: 129 }, 'invalid_value', 'n', ''],
    ['stop with five strings', { stop: ['a', 'b', 'c', 'd', 'e'] }, 'invalid_value', 'stop', 'at most 4'],
    ['stop a number', { stop: 5 }, 'invalid_type', 'stop', ''],
    ['stop holding a number', { stop: ['a', 1] }, 'invalid_type', 'stop[1]', ''],
    ['tools empty', { tools: [] }, 'invalid_value', 'tools', ''],
    ['tools an object', { tools: { type: 'function' } }, 'invalid_type', 'tools', ''],
    [
      'a custom tool',
      { tools: [{ type: 'custom', custom: { name: 'x' } }] },
      'invalid_value',
      'tools[0].type',
      '"function"',
    ],
    [
      'a tool without function',
      { tools: [{ type: 'function' }] },
      'missing_required_parameter',
      'tools[0].function',
      '',
    ],
    [
      'a tool name with a space',
      { tools: [{ type: 'function', function: { name: 'get weather' } }] },
      'invalid_value',
      'tools[0].function.name',
      'letters, digits',
    ],
    [
      'tool parameters an array',
      { tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] },
      'invalid_type',
      'tools[0].function.parameters',
      '',
    ],
    ['tool_choice unknown', { tool_choice: 'any' }, 'invalid_value', 'tool_choice', '"required"'],
    [
      'tool_choice without name',
      { tool_choice: { type: 'function', function: {} } },
      'missing_required_parameter',
      'tool_choice.function.name',
      '',
    ],
    [
      'tool_choice allowed_tools',
      { tool_choice: { type: 'allowed_tools' } },
      'invalid_value',
      'tool_choice.type',
      '',
    ],
    ['parallel_tool_calls null', { parallel_tool_calls: null }, 'invalid_type', 'parallel_tool_calls', ''],
    ['response_format a string', { response_format: 'json' }, 'invalid_type', 'response_format', ''],
    [
      'response_format unknown type',
      { response_format: { type: 'xml' } },
      'invalid_value',
      'response_format.type',
      '"json_object"',
    ],
    [
      'json_schema missing',
      { response_format: { type: 'json_schema' } },
      'missing_required_parameter',
      'response_format.json_schema',
      '',
    ],
    [
      'json_schema without name',
      { response_format: { type: 'json_schema', json_schema: { schema: {} } } },
      'missing_required_parameter',
      'response_format.json_schema.name',
      '',
    ],
    ['logprobs a string', { logprobs: 'true' }, 'invalid_type', 'logprobs', ''],
    ['top_logprobs above 20', { top_logprobs: 21 }, 'invalid_value', 'top_logprobs', ''],
    ['presence_penalty below -2', { presence_penalty: -3 }, 'invalid_value', 'presence_penalty', ''],
    ['frequency_penalty a string', { frequency_penalty: 'high' }, 'invalid_type', 'frequency_penalty', ''],
    ['seed fractional', { seed: 1.5 }, 'invalid_value', 'seed', ''],
    ['user a number', { user: 7 }, 'invalid_type', 'user', ''],
    ['logit_bias an array', { logit_bias: [1] }, 'invalid_type', 'logit_bias', ''],
    ['logit_bias out of range', { logit_bias: { '50256': -101 } }, 'invalid_value', 'logit_bias[50256]', ''],
  ])('%s', (_name, fields, code, param, words) => {
    const error = gatewayError(validate(request(fields)), { code, param })
    if (words) expect(error.message).toContain(words)
  })

  test('a tool message without tool_call_id names messages[i].tool_call_id and the role', () => {
    const body = withMessages(
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'user', content: 'y' },
      { role: 'tool', content: 'result' },
    )
    const error = gatewayError(validate(body), {
      code: 'missing_required_parameter',
      param: 'messages[3].tool_call_id',
    })
    expect(error.message).toContain("'tool'")
    expect(error.message).toContain('id of the assistant tool call')
  })

  test('a tool_call_id of the wrong type', () => {
    gatewayError(validate(withMessages({ role: 'tool', content: 'x', tool_call_id: 5 })), {
      code: 'invalid_type',
      param: 'messages[0].tool_call_id',
    })
  })

  test('an unknown role names messages[i].role and lists the allowed roles', () => {
    const error = gatewayError(validate(withMessages({ role: 'robot', content: 'x' })), {
      code: 'invalid_value',
      param: 'messages[0].role',
    })
    for (const role of ['system', 'developer', 'user', 'assistant', 'tool'])
      expect(error.message).toContain(`"${role}"`)
    expect(error.message).toContain('"robot"')
  })

  test.each([['function'], ['USER'], ['__proto__'], ['constructor'], ['toString']])(
    'role %j is unknown',
    (role) => {
      gatewayError(validate(withMessages({ role, content: 'x' })), {
        code: 'invalid_value',
        param: 'messages[0].role',
      })
    },
  )

  test('a role that is not a string is invalid_type', () => {
    gatewayError(validate(withMessages({ role: 5, content: 'x' })), {
      code: 'invalid_type',
      param: 'messages[0].role',
    })
  })

  test('a message without role', () => {
    gatewayError(validate(withMessages({ content: 'x' })), {
      code: 'missing_required_parameter',
      param: 'messages[0].role',
    })
  })

  test('a message that is not an object', () => {
    gatewayError(validate(withMessages('hello')), { code: 'invalid_type', param: 'messages[0]' })
    gatewayError(validate(withMessages([{ role: 'user', content: 'x' }])), {
      code: 'invalid_type',
      param: 'messages[0]',
    })
  })

  test('a user message without content', () => {
    gatewayError(validate(withMessages({ role: 'user' })), {
      code: 'missing_required_parameter',
      param: 'messages[0].content',
    })
  })

  test('content of the wrong type, in the role it belongs to', () => {
    const error = gatewayError(validate(withMessages({ role: 'user', content: 5 })), {
      code: 'invalid_type',
      param: 'messages[0].content',
    })
    expect(error.message).toContain("'user'")
  })

  test('empty content parts', () => {
    gatewayError(validate(withMessages({ role: 'user', content: [] })), {
      code: 'invalid_value',
      param: 'messages[0].content',
    })
  })

  test('an unknown content part type lists the types the role allows', () => {
    const error = gatewayError(
      validate(withMessages({ role: 'user', content: [{ type: 'video', video: {} }] })),
      {
        code: 'invalid_value',
        param: 'messages[0].content[0].type',
      },
    )
    expect(error.message).toContain('"image_url"')
  })

  test('an image part in a system message names the part type', () => {
    gatewayError(
      validate(withMessages({ role: 'system', content: [{ type: 'image_url', image_url: { url: 'x' } }] })),
      {
        code: 'invalid_value',
        param: 'messages[0].content[0].type',
      },
    )
  })

  test('an image part without url', () => {
    gatewayError(validate(withMessages({ role: 'user', content: [{ type: 'image_url', image_url: {} }] })), {
      code: 'missing_required_parameter',
      param: 'messages[0].content[0].image_url.url',
    })
  })

  test('an image detail out of the enum', () => {
    const body = withMessages({
      role: 'user',
      content: [{ type: 'image_url', image_url: { url: 'x', detail: 'max' } }],
    })
    gatewayError(validate(body), { code: 'invalid_value', param: 'messages[0].content[0].image_url.detail' })
  })

  test('an audio part without format', () => {
    const body = withMessages({
      role: 'user',
      content: [{ type: 'input_audio', input_audio: { data: 'AAAA' } }],
    })
    gatewayError(validate(body), {
      code: 'missing_required_parameter',
      param: 'messages[0].content[0].input_audio.format',
    })
  })

  test('tool call arguments sent as an object tell the client to encode them', () => {
    const body = withMessages({
      role: 'assistant',
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: { city: 'Paris' } } }],
    })
    const error = gatewayError(validate(body), {
      code: 'invalid_type',
      param: 'messages[0].tool_calls[0].function.arguments',
    })
    expect(error.message).toContain('JSON-encoded string')
  })

  test('a tool call of another type', () => {
    const body = withMessages({ role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: {} }] })
    gatewayError(validate(body), { code: 'invalid_value', param: 'messages[0].tool_calls[0].type' })
  })

  test('the first problem in schema order wins: model before messages', () => {
    gatewayError(validate({ messages: 'x' }), { code: 'missing_required_parameter', param: 'model' })
  })

  test.each([
    ['an array', []],
    ['a string', 'x'],
    ['null', null],
    ['undefined', undefined],
  ])('a body that is %s', (_name, body) => {
    gatewayError(validate(body), { code: 'invalid_type', param: null })
  })

  test(`nesting deeper than ${MAX_JSON_DEPTH} levels is refused before parsing, also under a "__proto__" key`, () => {
    const deep = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH)
    for (const key of ['extra', '__proto__']) {
      const text = `{"model": "a/b", "messages": [{"role": "user", "content": "x"}], "${key}": ${deep}}`
      const error = gatewayError(() => parseChatBody(text), { code: 'invalid_value' })
      expect(error.param?.startsWith(key)).toBe(true)
    }
  })

  test('nesting just inside the limit passes', () => {
    const depth = MAX_JSON_DEPTH - 1
    const body = parseChatBody(
      `{"model": "a/b", "messages": [{"role": "user", "content": "x"}], "x": ${'['.repeat(depth)}${']'.repeat(depth)}}`,
    )
    expect(() => validateChatRequest(body)).not.toThrow()
  })

  test('a huge number is rejected, not overflowed', () => {
    gatewayError(validate(parseChatBody('{"model": "a/b", "messages": [], "max_tokens": 1e999}')), {
      param: 'messages',
    })
    gatewayError(
      validate(
        parseChatBody(
          '{"model": "a/b", "messages": [{"role": "user", "content": "x"}], "max_tokens": 1e999}',
        ),
      ),
      {
        code: 'invalid_value',
        param: 'max_tokens',
      },
    )
  })

  test('a long value is not echoed back in full', () => {
    const error = gatewayError(validate(withMessages({ role: 'r'.repeat(10_000), content: 'x' })), {
      param: 'messages[0].role',
    })
    expect(error.message).toContain('a string of 10000 characters')
    expect(error.message.length).toBeLessThan(300)
  })

  test('if explaining an error fails, the result is still a 400 GatewayError', () => {
    const broken = {
      First() {
        throw new Error('boom')
      },
    } as unknown as Parameters<typeof explainValidationError>[0]
    const error = explainValidationError(broken, {})
    expect(error).toBeInstanceOf(GatewayError)
    expect(error.status).toBe(400)
  })
})
