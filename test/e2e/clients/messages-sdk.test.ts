/**
 * The official `@anthropic-ai/sdk` against `POST /v1/messages` on every provider kind. Anthropic
 * providers are passed through: the stream is byte-equal to the recording apart from the model
 * id, the JSON equal field by field, thinking signatures and cache_control survive, the client's
 * `anthropic-beta` arrives verbatim (the fake refuses anything else) and usage is the recording's.
 * Other kinds are translated into Anthropic's events exactly.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import type { APIError } from '@anthropic-ai/sdk'
import { jsonSchemaOutputFormat } from '@anthropic-ai/sdk/helpers/json-schema'
import { RECORDED } from '../../support/fake-upstream.ts'
import {
  BETA,
  expectAnthropicError,
  hello,
  type MessagesBed,
  parseAnthropicSSE,
  startMessagesBed,
} from '../../support/messages-bed.ts'

let bed: MessagesBed

beforeAll(async () => {
  bed = await startMessagesBed()
})
afterAll(async () => {
  await bed.stop()
})

const FIXTURES = ['text', 'tool', 'thinking'] as const

/** A conversation after a web search (the server tool's blocks), then a user turn with a search result block. */
const SEARCHED = [
  { role: 'user', content: 'Who won the 2026 Tour de France?' },
  {
    role: 'assistant',
    content: [
      {
        type: 'server_tool_use',
        id: 'srvtoolu_1',
        name: 'web_search',
        input: { query: 'Tour de France 2026 winner' },
      },
      {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: [
          {
            type: 'web_search_result',
            url: 'https://example.com/tdf',
            title: 'TdF',
            encrypted_content: 'enc',
            page_age: null,
          },
        ],
      },
      { type: 'text', text: 'Tadej Pogačar.' },
    ],
  },
  { role: 'user', content: 'Thanks!' },
  {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'stage 1' } }],
  },
  {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [
          {
            type: 'search_result',
            source: 'https://example.com/stage1',
            title: 'Stage 1',
            content: [{ type: 'text', text: 'Stage 1 went to Milan.' }],
            citations: { enabled: true },
          },
        ],
      },
    ],
  },
]

/** The thinking recording's usage per its README (prompt = input + cache, completion = final output). */
const THINKING_USAGE: { stream: [number, number]; json: [number, number] } = {
  stream: [69, 53],
  json: [69, 33],
}

const recordedLines = async (fixture: string) =>
  (await Bun.file(new URL(`anthropic-${fixture}.chunks.txt`, RECORDED)).text())
    .split('\n')
    .filter((l) => l.trim())

const withModel = (json: string, id: string) =>
  json.replace(/"model":"[^"]*"/, `"model":${JSON.stringify(id)}`)

const withoutPings = (sse: string) =>
  sse
    .split('\n\n')
    .filter((b) => b && !b.startsWith('event: ping'))
    .join('\n\n')

async function tokensFor(key: string, model: string): Promise<[number, number]> {
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${bed.gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
    const body = (await res.json()) as {
      usage: {
        by_model: Record<string, { requests: number; prompt_tokens: number; completion_tokens: number }>
      }
    }
    const row = body.usage.by_model[model]
    if (row && (row.prompt_tokens || row.completion_tokens || i > 20)) {
      expect(row.requests).toBe(1)
      return [row.prompt_tokens, row.completion_tokens]
    }
    await Bun.sleep(20)
  }
  throw new Error('usage never recorded')
}

describe('pass-through to an anthropic provider', () => {
  for (const fixture of FIXTURES) {
    test(`${fixture} stream: byte-equal to the recording apart from the model id; usage recorded`, async () => {
      const { key } = await bed.gw.key(`pt-stream-${fixture}`, 'unlimited')
      const res = await bed.post(
        { model: `anthropic/${fixture}`, max_tokens: 1024, stream: true, messages: hello },
        { 'x-api-key': key },
      )
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toStartWith('text/event-stream')
      const body = await res.text()
      const lines = await recordedLines(fixture)
      const expected = lines
        .map((line, i) => {
          const type = (JSON.parse(line) as { type: string }).type
          return `event: ${type}\ndata: ${i === 0 ? withModel(line, `anthropic/${fixture}`) : line}\n\n`
        })
        .join('')
      expect(withoutPings(body)).toBe(withoutPings(expected))
      const events = lines.map((l) => JSON.parse(l))
      const start = events[0].message.usage
      const delta = events.findLast((e: { type: string }) => e.type === 'message_delta').usage
      const prompt =
        (delta.input_tokens ?? start.input_tokens) +
        (start.cache_creation_input_tokens ?? 0) +
        (start.cache_read_input_tokens ?? 0)
      if (fixture === 'thinking') expect([prompt, delta.output_tokens]).toEqual(THINKING_USAGE.stream)
      expect(await tokensFor(key, `anthropic/${fixture}`)).toEqual([prompt, delta.output_tokens])
    })

    test(`${fixture}: messages.create equals the recorded message field by field`, async () => {
      const recorded = await Bun.file(new URL(`anthropic-${fixture}.json`, RECORDED)).json()
      const message = await bed.client().messages.create({
        model: `anthropic/${fixture}`,
        max_tokens: 1024,
        messages: hello,
      })
      expect(message as unknown).toEqual({ ...recorded, model: `anthropic/${fixture}` })
    })

    test(`${fixture}: messages.stream accumulates the recorded blocks`, async () => {
      const stream = bed
        .client()
        .messages.stream({ model: `anthropic/${fixture}`, max_tokens: 1024, messages: hello })
      const message = await stream.finalMessage()
      expect(message.model).toBe(`anthropic/${fixture}`)
      const events = (await recordedLines(fixture)).map((l) => JSON.parse(l))
      const starts = events.filter((e) => e.type === 'content_block_start')
      expect(message.content.map((b) => b.type)).toEqual(starts.map((e) => e.content_block.type))
      if (fixture === 'thinking') {
        const block = message.content[0] as { type: 'thinking'; thinking: string; signature: string }
        const signature = events.find((e) => e.delta?.type === 'signature_delta').delta.signature
        expect(block.signature).toBe(signature)
        expect(block.thinking).toContain('925 ÷ 5 = 185')
      }
      expect(message.usage.output_tokens).toBe(
        events.findLast((e) => e.type === 'message_delta').usage.output_tokens,
      )
    })
  }

  test('the JSON usage is the recording’s (thinking: prompt 69, completion 33)', async () => {
    const { key } = await bed.gw.key('pt-json-usage', 'unlimited')
    const res = await bed.post(
      { model: 'anthropic/thinking', max_tokens: 1024, messages: hello },
      { 'x-api-key': key },
    )
    expect(res.status).toBe(200)
    await res.json()
    expect(await tokensFor(key, 'anthropic/thinking')).toEqual(THINKING_USAGE.json)
  })

  test('the upstream gets the body with only the model changed, cache_control and thinking blocks kept, the beta header verbatim', async () => {
    const body = {
      model: 'anthropic/thinking',
      max_tokens: 2048,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      messages: [
        { role: 'user', content: 'What is 925 / 5?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Divide.', signature: 'sig-abc' },
            { type: 'text', text: '185' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'Sure?', cache_control: { type: 'ephemeral' } }] },
      ],
    }
    const res = await bed.post(body)
    expect(res.status).toBe(200)
    await res.json()
    const seen = bed.anthropic.lastRequest()!
    expect(seen.path).toBe('/v1/messages')
    expect(seen.body).toEqual({ ...body, model: 'thinking' })
    expect(seen.headers['anthropic-beta']).toBe(BETA)
    expect(seen.headers['anthropic-version']).toBe('2023-06-01')
    expect(seen.headers['x-api-key']).not.toBe(bed.key)
  })

  // Claude Code's web search runs upstream; its next turn sends the server tool's blocks back. They
  // were a 400 on every route, so the turn after a search failed on the one route that runs it.
  test('server tool blocks and other Anthropic-only blocks in the history pass through unchanged', async () => {
    const body = {
      model: 'anthropic/text',
      max_tokens: 256,
      messages: SEARCHED,
    }
    const res = await bed.post(body)
    expect(res.status).toBe(200)
    await res.json()
    expect(bed.anthropic.lastRequest()!.body).toEqual({ ...body, model: 'text' })
  })

  // Anthropic's MCP connector: its toolset names a server, not a tool. `name` was required of every
  // tool, so the pass-through refused the connector outright.
  test('an MCP toolset (no name) and mcp_servers pass through; a client tool without a name is refused on every route', async () => {
    const body = {
      model: 'anthropic/text',
      max_tokens: 256,
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'docs' }],
      tools: [{ type: 'mcp_toolset', mcp_server_name: 'docs' }],
      messages: hello,
    }
    const res = await bed.post(body)
    expect(res.status).toBe(200)
    await res.json()
    expect(bed.anthropic.lastRequest()!.body).toEqual({ ...body, model: 'text' })

    const before = bed.anthropic.requests().length
    for (const model of ['anthropic/text', 'mock/gpt-4o-mini']) {
      const unnamed = await bed.post({
        model,
        max_tokens: 64,
        tools: [{ input_schema: { type: 'object' } }],
        messages: hello,
      })
      expect(unnamed.status).toBe(400)
      expect(((await unnamed.json()) as any).error.message).toContain('tools[0].name is required')
    }
    expect(bed.anthropic.requests().length).toBe(before)
  })

  test('a different anthropic-beta is relayed as sent (the fake refuses it: proof it arrived verbatim)', async () => {
    const res = await bed.post(
      { model: 'anthropic/text', max_tokens: 64, messages: hello },
      { 'anthropic-beta': 'other-beta' },
    )
    expect(res.status).toBe(400)
    const body = (await res.json()) as { error: { type: string; message: string } }
    expect(body.error.type).toBe('invalid_request_error')
    expect(body.error.message).toContain('"other-beta"')
  })
})

describe('translated: openai, gemini and demo providers', () => {
  for (const model of ['mock/gpt-4o-mini', 'gemini/text', 'demo/agent']) {
    test(`${model}: create and stream agree, events in Anthropic's order`, async () => {
      const client = bed.client()
      const created = await client.messages.create({ model, max_tokens: 512, messages: hello })
      expect(created.type).toBe('message')
      expect(created.role).toBe('assistant')
      expect(created.model).toBe(model)
      expect(created.id).toStartWith('msg_')
      expect(created.stop_reason).toBe('end_turn')
      expect(created.content[0]?.type).toBe('text')
      expect(created.usage.input_tokens).toBeGreaterThan(0)
      expect(created.usage.output_tokens).toBeGreaterThan(0)

      const res = await bed.post({ model, max_tokens: 512, stream: true, messages: hello })
      const events = parseAnthropicSSE(await res.text()).filter((e) => e.event !== 'ping')
      for (const e of events) expect(e.data.type).toBe(e.event)
      expect(events[0]!.event).toBe('message_start')
      expect(events[0]!.data.message.model).toBe(model)
      expect(events.at(-1)!.event).toBe('message_stop')
      const delta = events.at(-2)!
      expect(delta.event).toBe('message_delta')
      expect(delta.data.delta.stop_reason).toBe('end_turn')
      expect(delta.data.usage.output_tokens).toBeGreaterThan(0)
      expect(events.map((e) => e.event)).toEqual([
        'message_start',
        'content_block_start',
        ...events.slice(2, -3).map(() => 'content_block_delta'),
        'content_block_stop',
        'message_delta',
        'message_stop',
      ])
      if (model !== 'gemini/text') {
        // Deterministic upstreams: the stream says what the JSON said.
        const text = events
          .filter((e) => e.event === 'content_block_delta')
          .map((e) => e.data.delta.text)
          .join('')
        expect(text).toBe((created.content[0] as { text: string }).text)
        const streamed = await client.messages
          .stream({ model, max_tokens: 512, messages: hello })
          .finalMessage()
        expect(streamed.content as unknown).toEqual(created.content)
        expect(streamed.usage.output_tokens).toBe(created.usage.output_tokens)
      }
    })
  }

  test('tool calls become tool_use blocks (input parsed), stop_reason tool_use, streamed as input_json_delta', async () => {
    const tools: Anthropic.Tool[] = [
      {
        name: 'get_weather',
        description: 'Weather',
        input_schema: { type: 'object', properties: { location: { type: 'string' } } },
      },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ]
    const client = bed.client()
    const created = await client.messages.create({
      model: 'mock/gpt-4o-mini',
      max_tokens: 256,
      tools,
      messages: hello,
    })
    expect(created.stop_reason).toBe('tool_use')
    const uses = created.content.filter((b) => b.type === 'tool_use')
    expect(uses.map((b) => b.name)).toEqual(['get_weather', 'get_time'])
    expect(typeof uses[0]!.input).toBe('object')
    const streamed = await client.messages
      .stream({ model: 'mock/gpt-4o-mini', max_tokens: 256, tools, messages: hello })
      .finalMessage()
    expect(streamed.stop_reason).toBe('tool_use')
    expect(streamed.content as unknown).toEqual(created.content)
    // The upstream got OpenAI tools and the system prompt as a system message.
    const up = bed.mock.stats.lastBody as Record<string, any>
    expect(up.tools[0]).toEqual({
      type: 'function',
      function: { name: 'get_weather', description: 'Weather', parameters: tools[0]!.input_schema },
    })
  })

  test('mcp_servers (tools only Anthropic connects) → 400 naming mcp_servers, not dropped', async () => {
    const servers = [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'docs' }]
    const res = await bed.post({
      model: 'mock/gpt-4o-mini',
      max_tokens: 64,
      mcp_servers: servers,
      messages: hello,
    })
    expect(res.status).toBe(400)
    const err = (await res.json()) as { error: { type: string; message: string } }
    expect(err.error.type).toBe('invalid_request_error')
    expect(err.error.message).toContain('mcp_servers')
  })

  test("Anthropic-only blocks: a server tool's trace in an assistant turn is left out (as thinking is), one in a user turn is refused by name", async () => {
    const res = await bed.post({ model: 'mock/gpt-4o-mini', max_tokens: 64, messages: SEARCHED.slice(0, 3) })
    expect(res.status).toBe(200)
    await res.json()
    expect((bed.mock.stats.lastBody as Record<string, any>).messages).toEqual([
      { role: 'user', content: 'Who won the 2026 Tour de France?' },
      { role: 'assistant', content: 'Tadej Pogačar.' },
      { role: 'user', content: 'Thanks!' },
    ])
    const refused = await bed.post({ model: 'mock/gpt-4o-mini', max_tokens: 64, messages: SEARCHED })
    expect(refused.status).toBe(400)
    const err = (await refused.json()) as { type: string; error: { type: string; message: string } }
    expect(err.type).toBe('error')
    expect(err.error.type).toBe('invalid_request_error')
    expect(err.error.message).toContain('messages[4].content[0].content[0]: ')
    expect(err.error.message).toContain('"search_result"')
  })

  test('a tool_result turn reaches an openai upstream as a tool message after the assistant tool_calls', async () => {
    await bed.client().messages.create({
      model: 'mock/gpt-4o-mini',
      max_tokens: 128,
      system: 'Be brief.',
      thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'call it', signature: 'x' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }] },
      ],
    })
    const up = bed.mock.stats.lastBody as Record<string, any>
    expect(up.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'toolu_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny' },
    ])
    expect(up.reasoning_effort).toBe('low')
    // Issue 22: OpenAI's current name (its reasoning models refuse max_tokens).
    expect(up.max_completion_tokens).toBe(128)
    expect('max_tokens' in up).toBe(false)
  })
})

describe("Anthropic's request-id header (the SDK's _request_id and requestID)", () => {
  for (const model of ['anthropic/text', 'mock/gpt-4o-mini']) {
    test(`${model}: create, stream, count_tokens and an error each carry it, equal to x-request-id`, async () => {
      const client = bed.client()
      const { data, response } = await client.messages
        .create({ model, max_tokens: 64, messages: hello })
        .withResponse()
      const requestId = (data as { _request_id?: string })._request_id
      expect(requestId).toStartWith('req_')
      expect(response.headers.get('request-id')).toBe(response.headers.get('x-request-id'))

      const stream = client.messages.stream({ model, max_tokens: 64, messages: hello })
      await stream.finalMessage()
      expect(stream.request_id).toStartWith('req_')
      expect(stream.request_id).not.toBe(requestId)

      const counted = await client.messages.countTokens({ model, messages: hello })
      expect((counted as { _request_id?: string })._request_id).toStartWith('req_')

      const err = await client.messages.create({ model, max_tokens: 0, messages: hello }).then(
        () => null,
        (e: unknown) => e as APIError,
      )
      if (!err) throw new Error('expected a 400')
      expect(err.status).toBe(400)
      expect(err.requestID).toStartWith('req_')
      expect(err.requestID).toBe((err.error as { request_id?: string }).request_id)
    })
  }

  test('a client-sent x-request-id is the request-id too; other surfaces have no request-id', async () => {
    const res = await bed.post(
      { model: 'mock/gpt-4o-mini', max_tokens: 64, messages: hello },
      { 'x-request-id': 'trace-42' },
    )
    expect(res.status).toBe(200)
    expect(res.headers.get('request-id')).toBe('trace-42')
    const chat = await fetch(`${bed.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock/gpt-4o-mini', messages: hello }),
    })
    expect(chat.status).toBe(200)
    expect(chat.headers.get('x-request-id')).toStartWith('req_')
    expect(chat.headers.get('request-id')).toBeNull()
  })
})

describe('structured outputs (output_config.format) on translated routes', () => {
  const CITY = {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
    required: ['city', 'days'],
    additionalProperties: false,
  } as const

  test("messages.parse with jsonSchemaOutputFormat: the demo's JSON in that shape, create and stream", async () => {
    const client = bed.client()
    const format = jsonSchemaOutputFormat(CITY)
    const parsed = await client.messages.parse({
      model: 'demo/echo-pro',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Plan a trip' }],
      output_config: { format },
    })
    expect(parsed.parsed_output).toEqual({ city: expect.any(String), days: expect.any(Number) })
    const streamed = await client.messages
      .stream({
        model: 'demo/echo-pro',
        max_tokens: 256,
        messages: [{ role: 'user', content: 'Plan a trip' }],
        output_config: { format },
      })
      .finalMessage()
    expect(streamed.parsed_output).toEqual(parsed.parsed_output)
  })

  test('an openai upstream gets response_format json_schema with the schema as sent; the beta output_format too', async () => {
    const client = bed.client()
    await client.messages.create({
      model: 'mock/gpt-4o-mini',
      max_tokens: 64,
      messages: hello,
      output_config: { format: { type: 'json_schema', schema: CITY } },
    })
    const expected = { type: 'json_schema', json_schema: { name: 'output', schema: CITY } }
    expect((bed.mock.stats.lastBody as Record<string, unknown>).response_format).toEqual(expected)
    const res = await bed.post(
      {
        model: 'mock/gpt-4o-mini',
        max_tokens: 64,
        messages: hello,
        output_format: { type: 'json_schema', schema: CITY },
      },
      { 'anthropic-beta': 'structured-outputs-2025-11-13' },
    )
    expect(res.status).toBe(200)
    expect((bed.mock.stats.lastBody as Record<string, unknown>).response_format).toEqual(expected)
  })

  test('a model without json_schema, or a format that is not json_schema → 400 naming it, nothing sent', async () => {
    const before = bed.mock.stats.requests
    const refused = await bed.post({
      model: 'mock/bare',
      max_tokens: 64,
      messages: hello,
      output_config: { format: { type: 'json_schema', schema: CITY } },
    })
    const body = await expectAnthropicError(refused, 400, 'invalid_request_error')
    expect(body.error.message).toContain('output_config.format')
    expect(refused.headers.get('x-switchyard-error-code')).toBe('unsupported_feature')
    const odd = await bed.post({
      model: 'mock/gpt-4o-mini',
      max_tokens: 64,
      messages: hello,
      output_config: { format: { type: 'json_object' } },
    })
    expect((await expectAnthropicError(odd, 400, 'invalid_request_error')).error.message).toContain(
      'output_config.format.type',
    )
    expect(bed.mock.stats.requests).toBe(before)
  })
})
