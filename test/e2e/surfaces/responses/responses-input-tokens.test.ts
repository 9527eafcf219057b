/**
 * `POST /v1/responses/input_tokens` (the OpenAI SDK's `responses.inputTokens.count`) answered 404.
 * Through the real SDK against the real gateway: a `wire: responses` provider counts upstream (the
 * fake answers as OpenAI does), every other kind is counted by the gateway and says it is an
 * estimate; the shared steps refuse as on every surface (401, 403, 404, 400 naming the field); it
 * is never admitted, so it spends none of the key's requests.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { IMAGE_ESTIMATE } from '../../../../src/surfaces/count-tokens.ts'
import { fakeInputTokens } from '../../../support/fake-openai-responses.ts'
import { generateMalformedResponses } from '../../../support/malformed-responses.ts'
import { type ResponsesBed, startResponsesBed } from '../../../support/responses-bed.ts'

let bed: ResponsesBed
beforeAll(async () => {
  bed = await startResponsesBed()
})
afterAll(() => bed.stop())

const count = (body: unknown, key = bed.key, headers: Record<string, string> = {}) =>
  fetch(`${bed.gw.url}/v1/responses/input_tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

describe('counted by the gateway (demo)', () => {
  test('responses.inputTokens.count answers OpenAI shape, said to be an estimate', async () => {
    const { data, response } = await bed
      .client()
      .responses.inputTokens.count({ model: 'demo/echo', instructions: 'Be brief.', input: 'Hello there' })
      .withResponse()
    expect(data).toEqual({ object: 'response.input_tokens', input_tokens: expect.any(Number) })
    expect(data.input_tokens).toBeGreaterThan(5)
    expect(data.input_tokens).toBeLessThan(40)
    expect(response.headers.get('x-switchyard-token-count')).toBe(
      'estimate; tokenizer=gpt-tokenizer o200k_base',
    )
  })

  test('the same conversation counts the same as on /v1/messages/count_tokens (one counter)', async () => {
    const responses = await bed.client().responses.inputTokens.count({
      model: 'demo/echo',
      instructions: 'You are terse.',
      input: [
        { role: 'user', content: 'What is the capital of France?' },
        { role: 'assistant', content: 'Paris.' },
        { role: 'user', content: [{ type: 'input_text', text: 'And of Italy?' }] },
      ],
    })
    const res = await fetch(`${bed.gw.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': bed.key, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'demo/echo',
        system: 'You are terse.',
        messages: [
          { role: 'user', content: 'What is the capital of France?' },
          { role: 'assistant', content: 'Paris.' },
          { role: 'user', content: [{ type: 'text', text: 'And of Italy?' }] },
        ],
      }),
    })
    expect(res.status).toBe(200)
    expect(responses.input_tokens).toBe(((await res.json()) as any).input_tokens)
  })

  test('function tools, calls, outputs and images count; input may be left out', async () => {
    const client = bed.client()
    const base = (await client.responses.inputTokens.count({ model: 'demo/echo', input: 'Look' }))
      .input_tokens
    const image = await client.responses.inputTokens.count({
      model: 'demo/echo',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
          ],
        },
      ],
    })
    expect(image.input_tokens).toBe(base + IMAGE_ESTIMATE)
    const tools = await client.responses.inputTokens.count({
      model: 'demo/echo',
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'Sunny, 21 degrees' },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          strict: false,
        },
      ],
    })
    expect(tools.input_tokens).toBeGreaterThan(base + 30)
    const noInput = await client.responses.inputTokens.count({
      model: 'demo/echo',
      instructions: 'Be brief.',
    })
    expect(noInput.input_tokens).toBeGreaterThan(3)
  })

  test('a large hostile input is counted in bounded time (extrapolated), not a 500', async () => {
    let text = ''
    for (let i = 0; i < 20_000; i++) text += String.fromCharCode(0x4e00 + ((i * 7919) % 20_000))
    // CPU time (the gateway runs in this process), which a loaded machine does not stretch.
    const cpu = process.cpuUsage()
    const res = await count({ model: 'demo/echo', input: text.repeat(20) })
    expect(res.status).toBe(200)
    expect(((await res.json()) as any).input_tokens).toBeGreaterThan(100_000)
    const used = process.cpuUsage(cpu)
    expect((used.user + used.system) / 1000).toBeLessThan(3_000)
  })
})

describe('counted upstream (openai, wire: responses)', () => {
  test('responses.inputTokens.count reaches the upstream /responses/input_tokens with its model name', async () => {
    const body = { model: 'oair/text', instructions: 'Be brief.', input: 'Hello there, upstream' }
    const { data, response } = await bed.client().responses.inputTokens.count(body).withResponse()
    expect(data).toEqual({
      object: 'response.input_tokens',
      input_tokens: fakeInputTokens({ instructions: body.instructions, input: body.input }),
    })
    expect(response.headers.get('x-switchyard-token-count')).toBe('upstream')
    const sent = bed.responses.lastRequest()!
    expect(sent.path).toBe('/v1/responses/input_tokens')
    expect(sent.headers.authorization).toBe('Bearer sk-oai-test')
    expect(sent.body).toEqual({ model: 'text', instructions: 'Be brief.', input: 'Hello there, upstream' })
  })

  test('a body without input is passed on without one; hosted tools go as they came', async () => {
    const tools = [{ type: 'web_search' as const }]
    const data = await bed
      .client()
      .responses.inputTokens.count({ model: 'oair/tool', instructions: 'Search well.', tools })
    expect(data.input_tokens).toBe(fakeInputTokens({ instructions: 'Search well.' }))
    expect(bed.responses.lastRequest()!.body).toEqual({ model: 'tool', instructions: 'Search well.', tools })
  })

  test("the upstream's refusal comes back as an error in OpenAI's shape, never a 500", async () => {
    const err = await bed
      .client()
      .responses.inputTokens.count({ model: 'oair/error', input: 'Hi' })
      .catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.APIError)
    expect(err.status).toBeGreaterThanOrEqual(400)
    expect(err.status).not.toBe(500)
    expect(err.message).toContain('You exceeded your current quota')
    expect(bed.responses.lastRequest()!.path).toBe('/v1/responses/input_tokens')
  })
})

describe('refusals', () => {
  test('an unknown model → 404 model_not_found naming it', async () => {
    const err = await bed
      .client()
      .responses.inputTokens.count({ model: 'demo/nope', input: 'Hi' })
      .catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.NotFoundError)
    expect(err.code).toBe('model_not_found')
    expect(err.param).toBe('model')
    expect(err.message).toContain('demo/nope')
  })

  test('a model outside the plan → 403 model_not_in_plan', async () => {
    const key = await bed.freshKey('free')
    const err = await bed
      .client(key)
      .responses.inputTokens.count({ model: 'oair/text', input: 'Hi' })
      .catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError)
    expect(err.code).toBe('model_not_in_plan')
  })

  test('no key → 401; a wrong key → 401', async () => {
    const none = await fetch(`${bed.gw.url}/v1/responses/input_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', input: 'Hi' }),
    })
    expect(none.status).toBe(401)
    expect(((await none.json()) as any).error.type).toBeString()
    const wrong = await bed
      .client('sk-not-a-key')
      .responses.inputTokens.count({ model: 'demo/echo', input: 'Hi' })
      .catch((e) => e)
    expect(wrong).toBeInstanceOf(OpenAI.AuthenticationError)
  })

  const BAD: [string, unknown, string | null][] = [
    ['input a number', { model: 'demo/echo', input: 5 }, 'input'],
    [
      'a message of an unknown role',
      { model: 'demo/echo', input: [{ role: 'robot', content: 'x' }] },
      'input[0].role',
    ],
    [
      'a part without text',
      { model: 'demo/echo', input: [{ role: 'user', content: [{ type: 'input_text' }] }] },
      'input[0].content[0].text',
    ],
    ['no model', { input: 'Hi' }, 'model'],
    [
      'previous_response_id (stateless)',
      { model: 'demo/echo', input: 'Hi', previous_response_id: 'resp_1' },
      'previous_response_id',
    ],
    [
      'an item_reference (stateless)',
      { model: 'demo/echo', input: [{ type: 'item_reference', id: 'msg_1' }] },
      'input[0].type',
    ],
    [
      'a hosted tool on a model that refuses them',
      { model: 'demo/strict', input: 'Hi', tools: [{ type: 'web_search' }] },
      'tools[0]',
    ],
    ['not JSON', '{"model": "demo/echo", "input": ', null],
    ['an array body', '[1, 2]', null],
  ]
  for (const [what, body, param] of BAD) {
    test(`bad input → 400 naming the field, no rate-limit headers (never admitted): ${what}`, async () => {
      const res = await count(body, await bed.freshKey('free'))
      expect(res.status).toBe(400)
      expect(res.headers.get('x-ratelimit-limit-requests')).toBeNull()
      const json = (await res.json()) as any
      expect(json.error.type).toBe('invalid_request_error')
      if (param !== null) expect(json.error.param).toStartWith(param)
    })
  }

  test('400 seeded malformed Responses bodies, local and upstream: 4xx in OpenAI shape or 200, never 5xx', async () => {
    const bodies = generateMalformedResponses(20_261_127, 400, 'demo/echo')
    const failures: string[] = []
    let refused = 0
    // 20 a key: under the throttle, so every answer is the body's own.
    for (let i = 0; i < bodies.length; i += 20) {
      const key = await bed.freshKey()
      await Promise.all(
        bodies.slice(i, i + 20).map(async ({ body, mutation }, j) => {
          const sent = (i + j) % 2 ? body.replace('"demo/echo"', '"oair/text"') : body
          const res = await count(sent, key)
          const text = await res.text()
          if (res.status >= 500 || (res.status !== 200 && res.status < 400))
            failures.push(`${res.status} after "${mutation}": ${text.slice(0, 200)}`)
          else if (res.status >= 400) {
            refused++
            const json = JSON.parse(text)
            if (typeof json.error?.message !== 'string' || json.error.code === 'count_tokens_throttled')
              failures.push(`bad refusal after "${mutation}": ${text.slice(0, 200)}`)
          } else if (typeof JSON.parse(text).input_tokens !== 'number')
            failures.push(`no count after "${mutation}"`)
        }),
      )
    }
    expect(failures).toEqual([])
    expect(refused).toBeGreaterThan(200)
  }, 60_000)

  test('the SDK sees bad input as a BadRequestError naming input', async () => {
    const err = await bed
      .client()
      .responses.inputTokens.count({ model: 'demo/echo', input: [{ role: 'robot', content: 'x' }] as never })
      .catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.param).toBe('input[0].role')
  })
})

describe('limits', () => {
  test("counting spends none of the key's requests: 8 counts on a 5-a-minute plan, then create still answers", async () => {
    const key = await bed.freshKey('free') // rpm 5
    const client = bed.client(key)
    for (let i = 0; i < 8; i++) {
      const { input_tokens } = await client.responses.inputTokens.count({
        model: 'demo/echo',
        input: `Hi ${i}`,
      })
      expect(input_tokens).toBeGreaterThan(0)
    }
    await bed.gw.deps.recorder.flush()
    const usage = (await (
      await fetch(`${bed.gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as any
    expect(usage.rate_limits.minute.used).toBe(0)
    expect(usage.usage.by_model['demo/echo']).toBeUndefined()
    const created = await client.responses.create({ model: 'demo/echo', input: 'Hello' })
    expect(created.status).toBe('completed')
  })

  test('its own throttle: past 20 calls a second per key → 429 count_tokens_throttled in OpenAI shape', async () => {
    const key = await bed.freshKey()
    const res = await Promise.all(
      Array.from({ length: 45 }, () => count({ model: 'demo/echo', input: 'Hi' }, key)),
    )
    const throttled = res.filter((r) => r.status === 429)
    expect(throttled.length).toBeGreaterThanOrEqual(5)
    expect(res.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(20)
    const body = (await throttled[0]!.json()) as any
    expect(body.error.code).toBe('count_tokens_throttled')
    expect(body.error.message).toContain('responses/input_tokens')
    expect(throttled[0]!.headers.get('retry-after')).toBe('1')
  })
})
