import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ChatRequest } from '../../../src/operations/chat.ts'
import type { GatewayError } from '../../../src/util/errors.ts'
import { validateResponse } from '../../support/openai-schemas.ts'
import { assemble, drain, planItems } from '../helpers.ts'
import { API_KEY, failure, openAITestbed, request } from './setup.ts'

const bed = openAITestbed()
const { provider, adapterCall, streamOf } = bed

describe('openai adapter, non-streaming', () => {
  test('posts the request as given, with the key and provider headers, and returns the upstream JSON', async () => {
    const { adapter, ctx } = adapterCall()
    const req = request('gpt-4o-mini', {
      temperature: 0.3,
      top_p: 0.9,
      seed: 7,
      user: 'u1',
      logprobs: true,
      custom_param: { a: 1 },
    })
    const res = await adapter.complete(req, ctx)
    expect(validateResponse(res)).toBeNull()
    expect(res.model).toBe('gpt-4o-mini') // left as the upstream sent it
    expect(res.choices[0]!.message.content).toBe('Hello from the mock')
    expect(res.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 })
    expect(bed.mock.stats.lastBody).toEqual(req)
    expect(bed.mock.stats.lastHeaders.authorization).toBe(`Bearer ${API_KEY}`)
    expect(bed.mock.stats.lastHeaders['openai-organization']).toBe('org-test')
    expect(bed.mock.stats.lastHeaders['content-type']).toBe('application/json')
  })

  test('never sends stream or stream_options on a non-streaming call', async () => {
    const { adapter, ctx } = adapterCall()
    await adapter.complete(
      request('gpt-4o-mini', { stream: true, stream_options: { include_usage: true } }),
      ctx,
    )
    expect(bed.mock.stats.lastBody).toEqual(request())
  })

  test('no api_key → no authorization header; a trailing slash on base_url is fine', async () => {
    const p = provider({ api_key: undefined, base_url: `${bed.mock.url}/` })
    const { adapter, ctx } = adapterCall({ provider: p })
    await adapter.complete(request(), ctx)
    expect(bed.mock.stats.requests).toBe(1)
    expect(bed.mock.stats.lastHeaders.authorization).toBeUndefined()
  })

  test('tool calls come back as the upstream sent them', async () => {
    const { adapter, ctx } = adapterCall()
    const tools = [
      { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } },
      { type: 'function' as const, function: { name: 'get_time' } },
    ]
    const res = await adapter.complete(request('gpt-4o-mini', { tools }), ctx)
    expect(validateResponse(res)).toBeNull()
    expect(res.choices[0]!.finish_reason).toBe('tool_calls')
    expect(res.choices[0]!.message.tool_calls!.map((c) => c.function.name)).toEqual([
      'get_weather',
      'get_time',
    ])
  })
})

describe('openai adapter, streaming', () => {
  test('streams role, content deltas, finish_reason and the usage chunk; always asks upstream for usage', async () => {
    const { chunks, error } = await streamOf('gpt-4o-mini', {
      stream_options: { include_usage: false },
      temperature: 0,
    })
    expect(error).toBeUndefined()
    const out = assemble(chunks)
    expect(out).toMatchObject({ role: 'assistant', content: 'Hello from the mock', finish: 'stop' })
    expect(chunks.at(-1)!.choices).toEqual([])
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 })
    expect(chunks.every((c) => c.model === 'gpt-4o-mini')).toBe(true)
    expect(bed.mock.stats.lastBody).toEqual({
      ...request('gpt-4o-mini', { temperature: 0 }),
      stream: true,
      stream_options: { include_usage: true },
    })
    expect(bed.mock.stats.lastHeaders.accept).toBe('text/event-stream')
  })

  test('other stream_options pass through beside include_usage', async () => {
    await streamOf('gpt-4o-mini', {
      stream_options: { include_obfuscation: false } as ChatRequest['stream_options'],
    })
    expect((bed.mock.stats.lastBody as ChatRequest).stream_options).toEqual({
      include_obfuscation: false,
      include_usage: true,
    } as never)
  })

  test('tool-call deltas arrive with index, id, type and name first, then argument fragments', async () => {
    const tools = [
      { type: 'function' as const, function: { name: 'get_weather' } },
      { type: 'function' as const, function: { name: 'get_time' } },
    ]
    const { chunks, error } = await streamOf('gpt-4o-mini', { tools })
    expect(error).toBeUndefined()
    const out = assemble(chunks)
    expect(out.finish).toBe('tool_calls')
    expect(out.tools.map((t) => [t.id, t.type, t.name])).toEqual([
      ['call_mock_0', 'function', 'get_weather'],
      ['call_mock_1', 'function', 'get_time'],
    ])
    expect(out.tools.map((t) => JSON.parse(t.arguments))).toEqual([
      { location: 'Paris', unit: 'celsius' },
      { location: 'Tokyo', unit: 'celsius' },
    ])
    const fragments = chunks.filter((c) => c.choices[0]?.delta.tool_calls?.[0]?.function?.arguments)
    expect(fragments.length).toBeGreaterThan(2)
  })
})

describe('openai adapter, loosely compatible servers', () => {
  const chunk = (finish: string | null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: finish }] })}\n\n`
  const answers: Record<string, () => Response> = {
    'json-error': () => Response.json({ error: { message: 'quota exhausted' } }),
    'no-done': () =>
      new Response(chunk(null) + chunk('stop'), { headers: { 'content-type': 'text/event-stream' } }),
    'no-finish': () => new Response(chunk(null), { headers: { 'content-type': 'text/event-stream' } }),
    'crlf-and-comments': () =>
      new Response(`: hello\r\n\r\n${chunk(null).replaceAll('\n', '\r\n')}data: [DONE]\r\n\r\n`, {
        headers: { 'content-type': 'text/event-stream' },
      }),
  }
  let server: ReturnType<typeof Bun.serve>
  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (req) => answers[new URL(req.url).pathname.split('/')[1]!]!(),
    })
  })
  afterAll(() => server.stop(true))

  const streamFrom = async (name: string) => {
    const p = provider({ base_url: `http://127.0.0.1:${server.port}/${name}` })
    const { adapter, ctx } = adapterCall({ provider: p })
    return drain(planItems(await adapter.stream(request(), ctx)))
  }

  test('a 200 JSON error body on a stream request → 502 upstream_error with its message', async () => {
    const p = provider({ base_url: `http://127.0.0.1:${server.port}/json-error` })
    const { adapter, ctx } = adapterCall({ provider: p })
    const err = await failure(adapter.stream(request(), ctx))
    expect([err.status, err.code]).toEqual([502, 'upstream_error'])
    expect(err.message).toContain('quota exhausted')
  })

  test('a stream without [DONE] is complete once a finish_reason arrived, interrupted otherwise', async () => {
    const done = await streamFrom('no-done')
    expect(done.error).toBeUndefined()
    expect(done.items.length).toBe(2)
    const cut = await streamFrom('no-finish')
    expect((cut.error as GatewayError).code).toBe('upstream_stream_interrupted')
  })

  test('CRLF line ends and comment lines are understood', async () => {
    const { items, error } = await streamFrom('crlf-and-comments')
    expect(error).toBeUndefined()
    expect(items.length).toBe(1)
  })
})
