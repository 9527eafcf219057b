/**
 * The demo's answer bound on every surface, against the real server: a 200-byte request whose
 * tool or output schema asks for `minLength` / `minItems` of 1e9 used to run the gateway out of
 * memory (a 502 after 13 s, retried as transient) or grow it to 12 GB; `minItems: 2e7` answered
 * 140 MB. Now it is a 400 in the surface's own error shape, naming the schema location, tried
 * once; and an answer that fits, fits within `MAX_ANSWER_CHARS`, all `n` choices together.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_ANSWER_CHARS } from '../../../src/providers/demo/bound.ts'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

let gw: TestGateway
let key: string
beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'demo',
          kind: 'demo',
          // Retries on: the request's own fault must still be tried once.
          retry: { attempts: 2, backoff_ms: 1 },
          models: [
            {
              name: 'agent',
              context_window: 1_000_000,
              max_output_tokens: 64_000,
              features: ['streaming', 'tools', 'parallel_tool_calls', 'json_mode', 'json_schema', 'n'],
            },
          ],
        },
      ],
      plans: PLANS,
    }),
  })
  key = (await gw.key('bounds', 'unlimited')).key
})
afterAll(() => gw.stop())

const post = (path: string, body: unknown) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  })

const HUGE = [
  { type: 'object', properties: { a: { type: 'string', minLength: 1_000_000_000 } } },
  { type: 'object', properties: { a: { type: 'array', minItems: 1_000_000_000 } } },
  { type: 'object', properties: { a: { type: 'array', minItems: 20_000_000 } } },
]

/** One body per surface and way of asking for a schema, each about 200 bytes. */
function bodies(schema: Record<string, unknown>, stream: boolean) {
  const messages = [{ role: 'user', content: 'hi' }]
  return [
    [
      '/v1/chat/completions',
      {
        model: 'demo/agent',
        stream,
        messages,
        tools: [{ type: 'function', function: { name: 'f', parameters: schema } }],
        tool_choice: 'required',
      },
    ],
    [
      '/v1/chat/completions',
      {
        model: 'demo/agent',
        stream,
        messages,
        response_format: { type: 'json_schema', json_schema: { name: 'out', schema } },
      },
    ],
    [
      '/v1/messages',
      {
        model: 'demo/agent',
        max_tokens: 1024,
        stream,
        messages,
        tools: [{ name: 'f', input_schema: schema }],
        tool_choice: { type: 'any' },
      },
    ],
    [
      '/v1/responses',
      {
        model: 'demo/agent',
        stream,
        input: 'hi',
        tools: [{ type: 'function', name: 'f', parameters: schema }],
        tool_choice: 'required',
      },
    ],
    [
      '/v1/responses',
      {
        model: 'demo/agent',
        stream,
        input: 'hi',
        text: { format: { type: 'json_schema', name: 'out', schema } },
      },
    ],
  ] as const
}

describe('a schema whose smallest value cannot fit the bound', () => {
  for (const stream of [false, true]) {
    test(`400 on every surface, in its own shape, tried once${stream ? ' (stream)' : ''}`, async () => {
      for (const schema of HUGE) {
        for (const [path, body] of bodies(schema, stream)) {
          const res = await post(path, body)
          const json = (await res.json()) as any
          const where = `${path} ${JSON.stringify(schema)}`
          expect({ where, status: res.status }).toEqual({ where, status: 400 })
          expect(res.headers.get('x-switchyard-attempts')).toBe('1')
          const message: string = json.error.message
          if (path === '/v1/messages')
            expect(json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
          else expect(json.error).toMatchObject({ type: 'invalid_request_error', code: 'answer_too_large' })
          expect(message).toContain('/properties/a')
          expect(message).toMatch(/minLength 1000000000|minItems (1000000000|20000000)/)
        }
      }
    }, 30_000)
  }
})

describe('an answer that fits is within the bound, all choices together', () => {
  test('200 string properties and a 100 KB message; n = 8', async () => {
    const properties: Record<string, unknown> = {}
    for (let i = 0; i < 200; i++) properties[`p${i}`] = { type: 'string' }
    const res = await post('/v1/chat/completions', {
      model: 'demo/agent',
      n: 8,
      messages: [{ role: 'user', content: 'lorem ipsum '.repeat(8_500) }],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties } } }],
      tool_choice: 'required',
    })
    expect(res.status).toBe(200)
    const json = (await res.json()) as any
    let chars = 0
    for (const c of json.choices)
      for (const call of c.message.tool_calls)
        chars += call.function.name.length + call.function.arguments.length
    expect(chars).toBeLessThanOrEqual(MAX_ANSWER_CHARS)
    expect(Object.keys(JSON.parse(json.choices[7].message.tool_calls[0].function.arguments))).toHaveLength(
      200,
    )
  })
})
