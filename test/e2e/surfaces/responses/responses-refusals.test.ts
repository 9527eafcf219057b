/**
 * What `POST /v1/responses` refuses, in OpenAI's error shape (checked against the published
 * `ErrorResponse` schema): 401, 403, 404 model, 400 feature naming the Responses field, 429 with the
 * rate-limit headers, stored-state fields, hosted tools a route cannot serve (refused, or dropped and
 * named in `x-switchyard-dropped-tools`). Nothing refused reaches an upstream.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type ResponsesBed, startResponsesBed } from '../../../support/responses-bed.ts'
import { validateErrorBody } from '../../../support/responses-schemas.ts'

let bed: ResponsesBed
beforeAll(async () => {
  bed = await startResponsesBed()
})
afterAll(() => bed.stop())

async function refusal(res: Response, status: number, code: string, param: string | null = null) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toStartWith('application/json')
  expect(res.headers.get('x-request-id')).toBeTruthy()
  const body = (await res.json()) as any
  expect(validateErrorBody(body)).toBeNull()
  expect(body.error.code).toBe(code)
  expect(body.error.param).toBe(param)
  return body.error as { message: string; type: string }
}

describe('auth, plan and model', () => {
  test('no key, a malformed key, an unknown key → 401 invalid_api_key', async () => {
    const noKey = await fetch(`${bed.gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', input: 'hi' }),
    })
    await refusal(noKey, 401, 'invalid_api_key')
    await refusal(await bed.post({ model: 'demo/echo', input: 'hi' }, 'not-a-key'), 401, 'invalid_api_key')
    await refusal(
      await bed.post({ model: 'demo/echo', input: 'hi' }, `sk-sy-${'0'.repeat(40)}`),
      401,
      'invalid_api_key',
    )
  })

  test('a disabled key → 403 key_disabled', async () => {
    const { id, key } = await bed.gw.key('responses-disabled', 'unlimited')
    await bed.gw.deps.accounts.setKeyState(id, 'disabled')
    const err = await refusal(await bed.post({ model: 'demo/echo', input: 'hi' }, key), 403, 'key_disabled')
    expect(err.type).toBe('permission_error')
  })

  test('a model outside the plan → 403 model_not_in_plan', async () => {
    const key = await bed.freshKey('free')
    await refusal(
      await bed.post({ model: 'anthropic/text', input: 'hi' }, key),
      403,
      'model_not_in_plan',
      'model',
    )
  })

  test('an unknown model → 404 model_not_found; no prefix → 400 invalid_model', async () => {
    await refusal(await bed.post({ model: 'demo/nope', input: 'hi' }), 404, 'model_not_found', 'model')
    await refusal(await bed.post({ model: 'echo', input: 'hi' }), 400, 'invalid_model', 'model')
  })
})

describe('feature check, named in Responses terms', () => {
  const strict = (extra: Record<string, unknown>) => bed.post({ model: 'demo/strict', input: 'hi', ...extra })

  test('text.format json_schema on a model without json_schema → 400 naming text.format', async () => {
    const format = { type: 'json_schema', name: 'x', schema: { type: 'object' } }
    const err = await refusal(await strict({ text: { format } }), 400, 'unsupported_feature', 'text.format')
    expect(err.message).toContain('text.format')
    expect(err.message).not.toContain('response_format')
  })

  test('an input_image part → 400 naming input[i].content[j]', async () => {
    const input = [
      { role: 'user', content: 'first' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
        ],
      },
    ]
    await refusal(await strict({ input }), 400, 'unsupported_feature', 'input[1].content[1]')
  })

  test('an input_file part → 400 naming input[i].content[j], as Messages refuses a document block', async () => {
    const pdf = {
      type: 'input_file',
      filename: 'a.pdf',
      file_data: 'data:application/pdf;base64,JVBERi0xLjQ=',
    }
    const input = [{ role: 'user', content: [{ type: 'input_text', text: 'summarise' }, pdf] }]
    const err = await refusal(await strict({ input }), 400, 'unsupported_feature', 'input[0].content[1]')
    expect(err.message).toContain('input_file')
  })

  test('reasoning.effort on a model without reasoning → 400 naming reasoning.effort', async () => {
    await refusal(
      await strict({ reasoning: { effort: 'high' } }),
      400,
      'unsupported_feature',
      'reasoning.effort',
    )
  })

  test('max_output_tokens above the model maximum → 400 naming it, on translated and pass-through routes', async () => {
    await refusal(await strict({ max_output_tokens: 100_000 }), 400, 'invalid_value', 'max_output_tokens')
    const res = await bed.post({ model: 'oair/text', input: 'hi', max_output_tokens: 100_000 })
    await refusal(res, 400, 'invalid_value', 'max_output_tokens')
  })

  test('a body that fails the schema → 400 naming the field', async () => {
    await refusal(await bed.post({ model: 'demo/echo' }), 400, 'missing_required_parameter', 'input')
    await refusal(
      await bed.post({ model: 'demo/echo', input: [{ role: 'robot', content: 'x' }] }),
      400,
      'invalid_value',
      'input[0].role',
    )
    const call = { type: 'function_call', name: 'f', arguments: '{}' }
    await refusal(
      await bed.post({ model: 'demo/echo', input: [call] }),
      400,
      'missing_required_parameter',
      'input[0].call_id',
    )
    const empty = await refusal(
      await bed.post({ model: 'demo/echo', input: [{ ...call, call_id: '' }] }),
      400,
      'invalid_value',
      'input[0].call_id',
    )
    expect(empty.message).toBe('input[0].call_id must be a non-empty string; got "".')
    await refusal(
      await bed.post({ model: 'demo/echo', input: 'x', temperature: 3 }),
      400,
      'invalid_value',
      'temperature',
    )
  })
})

describe('what only the Responses API reads: refused by name on translated routes, passed through', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      'an image by file id',
      { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] },
      'input[0].content[0]',
    ],
    [
      'a hosted tool_choice',
      { input: 'hi', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } },
      'tool_choice',
    ],
  ]
  test.each(cases)('%s', async (_, body, param) => {
    await refusal(await bed.post({ model: 'anthropic/text', ...body }), 400, 'unsupported_value', param)
    const res = await bed.post({ model: 'oair/text', ...body })
    expect(res.status).toBe(200)
    const sent = bed.responses.lastRequest()!.body
    for (const [key, value] of Object.entries(body)) {
      if (typeof value === 'object') expect(sent[key]).toMatchObject(value as object)
      else expect(sent[key]).toBe(value)
    }
  })
})

// What the AI SDK's openai.responses(...) sends for its own earlier answers unless told
// store: false. Nothing is stored — not here, nor at a Responses upstream, which is sent
// store: false — so no route can resolve one: OpenAI would answer that the item was not found.
test('an item_reference → 400 on every route, saying the gateway stores nothing and what to send', async () => {
  const body = {
    input: [
      { role: 'user', content: 'hi' },
      { type: 'item_reference', id: 'msg_1' },
    ],
  }
  const before = bed.responses.requests().length
  for (const model of ['anthropic/text', 'openai/gpt-4o-mini', 'demo/echo', 'oair/text']) {
    const err = await refusal(await bed.post({ model, ...body }), 400, 'unsupported_value', 'input[1].type')
    expect(err.message).toContain('"msg_1"')
    expect(err.message).toContain('stateless')
    expect(err.message).toContain('store: false')
  }
  expect(bed.responses.requests().length).toBe(before)
})

describe('what a translated answer cannot honour: refused by name, passed through to wire: responses', () => {
  // A stored prompt template is expanded by OpenAI alone; translated, it was dropped and the model
  // answered without its instructions.
  test('prompt (a template stored at OpenAI) → 400 naming prompt', async () => {
    const prompt = { id: 'pmpt_123', version: '2', variables: { city: 'Paris' } }
    for (const model of ['demo/echo', 'anthropic/text', 'openai/gpt-4o-mini']) {
      const err = await refusal(
        await bed.post({ model, input: 'hi', prompt }),
        400,
        'unsupported_parameter',
        'prompt',
      )
      expect(err.message).toContain('wire: responses')
    }
    const res = await bed.post({ model: 'oair/text', input: 'hi', prompt })
    expect(res.status).toBe(200)
    expect(bed.responses.lastRequest()!.body.prompt).toEqual(prompt)
  })

  // Log probabilities are the logprobs feature (DESIGN §3), and a translated answer carries none.
  test('top_logprobs / include message.output_text.logprobs: the logprobs feature, then refused when translated', async () => {
    const asks: Array<[Record<string, unknown>, string]> = [
      [{ top_logprobs: 3 }, 'top_logprobs'],
      [{ include: ['message.output_text.logprobs'] }, 'include'],
    ]
    for (const [ask, param] of asks) {
      const body = { input: 'hi', ...ask }
      await refusal(await bed.post({ model: 'demo/strict', ...body }), 400, 'unsupported_feature', param)
      await refusal(await bed.post({ model: 'anthropic/text', ...body }), 400, 'unsupported_feature', param)
      await refusal(
        await bed.post({ model: 'openai/logprobs', ...body }),
        400,
        'unsupported_parameter',
        param,
      )
      const res = await bed.post({ model: 'oair/text', ...body })
      expect(res.status).toBe(200)
      expect(bed.responses.lastRequest()!.body).toMatchObject(ask)
    }
    // Codex's include asks for no log probabilities.
    const codex = await bed.post({
      model: 'demo/strict',
      input: 'hi',
      include: ['reasoning.encrypted_content'],
    })
    expect(codex.status).toBe(200)
  })
})

describe('stateless', () => {
  test.each([
    ['previous_response_id', 'resp_123'],
    ['conversation', 'conv_123'],
    ['background', true],
  ])('%s → 400 naming it', async (field, value) => {
    const err = await refusal(
      await bed.post({ model: 'demo/echo', input: 'hi', [field]: value }),
      400,
      'unsupported_parameter',
      field,
    )
    expect(err.message).toContain('stateless')
  })

  test('store: true is accepted and answered with store: false', async () => {
    const res = await bed.post({ model: 'demo/echo', input: 'hi', store: true })
    expect(res.status).toBe(200)
    expect(((await res.json()) as any).store).toBe(false)
  })
})

describe('hosted tools', () => {
  const tools = [
    { type: 'function', name: 'get_time', parameters: { type: 'object', properties: {} } },
    { type: 'web_search' },
    { type: 'file_search', vector_store_ids: ['vs_1'] },
  ]

  test('refused by default (unsupported_tools: reject) → 400 naming tools[i]', async () => {
    const before = bed.anthropic.requests().length
    await refusal(
      await bed.post({ model: 'anthropic/text', input: 'hi', tools }),
      400,
      'unsupported_feature',
      'tools[1]',
    )
    expect(bed.anthropic.requests().length).toBe(before)
  })

  test('dropped where the model opts in, and named in x-switchyard-dropped-tools', async () => {
    const res = await bed.post({ model: 'demo/echo', input: 'hi', tools, stream: true })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-dropped-tools')).toBe('web_search, file_search')
    const text = await res.text()
    const completed = JSON.parse(text.trim().split('\n').at(-1)!.slice(6))
    expect(completed.response.tools.map((t: any) => t.type)).toEqual(['function'])
  })

  /**
   * A hosted tool's type is the client's own text. Joined raw into the header, a line break or a
   * character past Latin-1 made the header invalid: the response failed and the connection was
   * reset; thousands of long types made a header no client reads. Escaped and bounded as
   * `x-switchyard-dropped-params` is.
   */
  test('a type with a line break or past Latin-1 is escaped in x-switchyard-dropped-tools; thousands are bounded', async () => {
    for (const [type, shown] of [
      ['web\nsearch', 'web\\nsearch'],
      ['web\r\nset-cookie: a=b', 'web\\r\\nset-cookie: a=b'],
      ['web€', 'web\\u20ac'],
    ]) {
      const res = await bed.post({ model: 'demo/echo', input: 'hi', tools: [tools[0], { type }] })
      expect(`${type}: ${res.status}`).toBe(`${type}: 200`)
      expect(res.headers.get('x-switchyard-dropped-tools')).toBe(shown!)
      expect(res.headers.get('set-cookie')).toBeNull()
      await res.text()
    }
    const many = Array.from({ length: 5_000 }, (_, i) => ({ type: `t${i}_${'x'.repeat(60)}` }))
    const res = await bed.post({ model: 'demo/echo', input: 'hi', tools: [tools[0], ...many] })
    expect(res.status).toBe(200)
    const header = res.headers.get('x-switchyard-dropped-tools')!
    expect(header.length).toBeLessThan(1_200)
    expect(header).toStartWith('t0_')
    expect(header).toEndWith('(5000 in all)')
    await res.text()
  })

  test('tool_choice among only dropped tools: the 400 names a bounded few of them', async () => {
    const many = Array.from({ length: 5_000 }, (_, i) => ({ type: `t${i}_${'x'.repeat(60)}` }))
    const error = await refusal(
      await bed.post({ model: 'demo/echo', input: 'hi', tools: many, tool_choice: 'required' }),
      400,
      'unsupported_value',
      'tool_choice',
    )
    expect(error.message.length).toBeLessThan(2_000)
    expect(error.message).toContain('5000 in all')
  })

  test('a namespace is expanded into its functions; calls come back with their namespace', async () => {
    const ns = {
      type: 'namespace',
      name: 'agents',
      description: 'Sub-agents',
      tools: [
        {
          type: 'function',
          name: 'spawn_agent',
          parameters: { type: 'object', properties: {} },
          strict: false,
        },
      ],
    }
    const res = await bed
      .client()
      .responses.create({ model: 'demo/echo', input: 'call spawn_agent', tools: [ns] as any })
    expect(res.output[0]).toMatchObject({ type: 'function_call', name: 'spawn_agent', namespace: 'agents' })
  })
})

describe('rate limits', () => {
  test('429 rate_limit_exceeded with retry-after and x-ratelimit-* headers', async () => {
    const key = await bed.freshKey('free')
    for (let i = 0; i < 5; i++) {
      const ok = await bed.post({ model: 'demo/echo', input: 'hi' }, key)
      expect(ok.status).toBe(200)
      expect(ok.headers.get('x-ratelimit-remaining-requests')).toBe(String(4 - i))
    }
    const res = await bed.post({ model: 'demo/echo', input: 'hi' }, key)
    const err = await refusal(res, 429, 'rate_limit_exceeded')
    expect(err.type).toBe('rate_limit_error')
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(res.headers.get('retry-after-ms')).toBeTruthy()
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('5')
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('0')
  })

  test('a mixed burst of 50 (chat and responses, stream and not) on rpm 5 admits exactly 5', async () => {
    const key = await bed.freshKey('free')
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const requests = Array.from({ length: 50 }, (_, i) => {
      const stream = i % 4 < 2
      if (i % 2 === 0) return bed.post({ model: 'demo/echo', input: 'hi', stream }, key)
      return fetch(`${bed.gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }], stream }),
      })
    })
    const res = await Promise.all(requests)
    await Promise.all(res.map((r) => r.text()))
    const statuses = res.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(5)
    expect(statuses.filter((s) => s === 429)).toHaveLength(45)
  })
})
