import { describe, expect, test } from 'bun:test'
import type { ProviderConfig } from '../../../src/config/schema.ts'
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatRequest,
  FunctionTool,
} from '../../../src/operations/chat.ts'
import { createDemoAdapter } from '../../../src/providers/demo/index.ts'
import { GatewayError } from '../../../src/util/errors.ts'
import { validateChunk, validateResponse } from '../../support/openai-schemas.ts'
import { assemble, callContext, drain, planItems } from '../helpers.ts'

const provider: ProviderConfig = {
  prefix: 'demo',
  kind: 'demo',
  models: [
    {
      name: 'echo',
      context_window: 8192,
      max_output_tokens: 1024,
      features: ['streaming', 'tools', 'json_mode'],
    },
  ],
}
const demo = createDemoAdapter(provider)
const TOOLS: FunctionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
  { type: 'function', function: { name: 'get_time' } },
]

const req = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'echo',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content },
  ],
  ...extra,
})

async function complete(r: ChatRequest): Promise<ChatCompletion> {
  const res = await demo.complete(r, callContext(provider))
  expect(validateResponse(res)).toBeNull()
  return res
}

async function stream(r: ChatRequest): Promise<ChatCompletionChunk[]> {
  const { items, error } = await drain(planItems(await demo.stream(r, callContext(provider))))
  expect(error).toBeUndefined()
  for (const chunk of items) expect(validateChunk(chunk)).toBeNull()
  return items
}

/** Everything but the timestamp. */
const stable = <T extends { created: number }>(x: T) => ({ ...x, created: 0 })

describe('demo adapter', () => {
  test('echoes the latest user message with deterministic usage', async () => {
    const res = await complete(req('Hello there, demo!'))
    expect(res.model).toBe('echo')
    expect(res.id).toBe('chatcmpl-req_test')
    expect(res.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: 'Echo: Hello there, demo!', refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ])
    // prompt: "system"+"Be brief." (15) + "user"+"Hello there, demo!" (22) = 37 chars → 10; completion
    // as streamed, each word with the space before it at 4 characters a token: "Echo:" 2, " Hello" 2,
    // " there," 2, " demo!" 2 → 8
    expect(res.usage).toEqual({ prompt_tokens: 10, completion_tokens: 8, total_tokens: 18 })
    expect(stable(await complete(req('Hello there, demo!')))).toEqual(stable(res))
  })

  test('text parts are read, and a tool result gets a text answer', async () => {
    const parts = await complete(
      req('', {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
      }),
    )
    expect(parts.choices[0]!.message.content).toBe('Echo: a b')
    const after = await complete({
      model: 'echo',
      tools: TOOLS,
      messages: [
        { role: 'user', content: 'get_weather please' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_demo_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_demo_1', content: 'sunny' },
      ],
    })
    expect(after.choices[0]!.message.content).toBe('Tool result received: sunny')
    expect(after.choices[0]!.finish_reason).toBe('stop')
  })

  test('n choices, identical', async () => {
    const res = await complete(req('hi', { n: 3 }))
    expect(res.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, 'Echo: hi'],
      [1, 'Echo: hi'],
      [2, 'Echo: hi'],
    ])
    expect(res.usage!.completion_tokens).toBe(3 * 3) // "Echo:" 2, " hi" 1
  })

  test('max_tokens truncates with finish_reason length; stop sequences cut the answer', async () => {
    const long = await complete(req('one two three four five six seven eight', { max_tokens: 4 }))
    // "Echo:" 2, " one" 1, " two" 1: then " three" (2) does not fit, nor its first four characters
    // (" thr" is one token, but the cap is spent) — counted as a gateway counts the stream.
    expect(long.choices[0]!.message.content).toBe('Echo: one two')
    expect(long.choices[0]!.finish_reason).toBe('length')
    expect(long.usage!.completion_tokens).toBe(4)
    // A piece is cut inside where the cap ends in it.
    const word = await complete(req('abcdefghijklmnop', { max_tokens: 4 }))
    expect(word.choices[0]!.message.content).toBe('Echo: abcdefg')
    expect(word.usage!.completion_tokens).toBe(4)
    const viaCompletionTokens = await complete(req('one two three four', { max_completion_tokens: 2 }))
    expect(viaCompletionTokens.choices[0]!.finish_reason).toBe('length')
    const stopped = await complete(req('alpha beta gamma', { stop: [' gamma', 'zzz'] }))
    expect(stopped.choices[0]!.message.content).toBe('Echo: alpha beta')
    expect(stopped.choices[0]!.finish_reason).toBe('stop')
  })

  test('JSON mode answers a JSON object; json_schema answers something that fits the schema', async () => {
    const obj = await complete(req('say "hi"', { response_format: { type: 'json_object' } }))
    expect(JSON.parse(obj.choices[0]!.message.content!)).toEqual({ echo: 'Echo: say "hi"' })
    const schema = {
      type: 'object',
      properties: {
        answer: { type: 'string' },
        mood: { enum: ['happy', 'sad'] },
        score: { type: 'integer', minimum: 1 },
        tags: { type: 'array', items: { $ref: '#/$defs/tag' }, minItems: 1 },
        ok: { type: ['boolean', 'null'] },
      },
      required: ['answer', 'mood', 'score', 'tags', 'ok'],
      $defs: { tag: { type: 'string' } },
    }
    const res = await complete(
      req('x', { response_format: { type: 'json_schema', json_schema: { name: 's', schema } } }),
    )
    expect(JSON.parse(res.choices[0]!.message.content!)).toEqual({
      answer: 'Echo: x',
      mood: 'happy',
      score: 1,
      tags: ['Echo: x'],
      ok: false,
    })
  })

  test('auto tools: calls the function the user names, with the JSON object from the message', async () => {
    const res = await complete(
      req('Please call get_weather with {"city": "Paris", "days": 2} now', { tools: TOOLS }),
    )
    expect(res.choices[0]!.finish_reason).toBe('tool_calls')
    expect(res.choices[0]!.message.content).toBeNull()
    expect(res.choices[0]!.message.tool_calls).toEqual([
      {
        id: 'call_demo_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris","days":2}' },
      },
    ])
    const plain = await complete(req('what is the weather?', { tools: TOOLS }))
    expect(plain.choices[0]!.finish_reason).toBe('stop')
  })

  test('several named tools are called in parallel unless parallel_tool_calls is false', async () => {
    const both = await complete(req('get_time and get_weather', { tools: TOOLS }))
    expect(
      both.choices[0]!.message.tool_calls!.map((c) => [c.id, c.function.name, c.function.arguments]),
    ).toEqual([
      ['call_demo_1', 'get_weather', '{}'],
      ['call_demo_2', 'get_time', '{}'],
    ])
    const one = await complete(req('get_time and get_weather', { tools: TOOLS, parallel_tool_calls: false }))
    expect(one.choices[0]!.message.tool_calls!.length).toBe(1)
  })

  test('tool_choice required / named force a call; none never calls; ids continue the conversation', async () => {
    const required = await complete(req('anything', { tools: TOOLS, tool_choice: 'required' }))
    expect(required.choices[0]!.message.tool_calls![0]!.function.name).toBe('get_weather')
    const named = await complete({
      model: 'echo',
      tools: TOOLS,
      tool_choice: { type: 'function', function: { name: 'get_time' } },
      messages: [
        { role: 'user', content: 'first' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_demo_1', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_demo_1', content: '12:00' },
      ],
    })
    expect(named.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_demo_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ])
    const none = await complete(req('get_weather', { tools: TOOLS, tool_choice: 'none' }))
    expect(none.choices[0]!.message.tool_calls).toBeUndefined()
  })

  test('streams like OpenAI: role first, word deltas, finish_reason last, then a usage chunk', async () => {
    const r = req('the quick brown fox')
    const chunks = await stream(r)
    const res = await complete(r)
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' })
    const words = chunks.filter((c) => c.choices[0]?.delta.content).map((c) => c.choices[0]!.delta.content)
    expect(words).toEqual(['Echo:', ' the', ' quick', ' brown', ' fox'])
    expect(chunks.at(-2)!.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }])
    expect(chunks.at(-1)!.choices).toEqual([])
    expect(chunks.at(-1)!.usage).toEqual(res.usage)
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set([res.id]))
    expect(assemble(chunks).content).toBe(res.choices[0]!.message.content!)
    expect((await stream(r)).map(stable)).toEqual(chunks.map(stable))
  })

  test('streams tool calls as deltas and n choices by index', async () => {
    const chunks = await stream(req('get_weather {"city":"Oslo"} get_time', { tools: TOOLS, n: 2 }))
    for (const choice of [0, 1]) {
      const out = assemble(chunks, choice)
      expect(out.finish).toBe('tool_calls')
      expect(out.tools).toEqual([
        { id: 'call_demo_1', type: 'function', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { id: 'call_demo_2', type: 'function', name: 'get_time', arguments: '{"city":"Oslo"}' },
      ])
    }
    const first = chunks[0]!.choices[0]!.delta
    expect(first.role).toBe('assistant')
    expect(first.tool_calls![0]).toEqual({
      index: 0,
      id: 'call_demo_1',
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    })
  })

  test('honours an aborted signal', async () => {
    const client = new AbortController()
    client.abort()
    const ctx = callContext(provider, { signal: client.signal })
    const err = await demo.complete(req('hi'), ctx).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(GatewayError)
    expect((err as GatewayError).status).toBe(499)
    const live = new AbortController()
    const reader = planItems(
      await demo.stream(req('a b c d'), callContext(provider, { signal: live.signal })),
    ).getReader()
    await reader.read()
    live.abort()
    const midway = await reader.read().catch((e: unknown) => e)
    expect((midway as GatewayError).code).toBe('client_closed_request')
  })
})
