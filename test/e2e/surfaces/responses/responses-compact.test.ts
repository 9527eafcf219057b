/**
 * `POST /v1/responses/compact` (Codex's remote compaction; it answered 404 on every route): the
 * compacted conversation in Open Responses' `CompactResource` shape, on every route, with the
 * pipeline's keys, limits and ledger —
 * - pass-through to an OpenAI provider with `wire: responses`: its `/responses/compact`, relayed;
 *   under a token limit (that endpoint has no cap) a summary streamed from its `/responses` and
 *   cut like any pass-through, answered in the compact shape;
 * - translated (the demo, an OpenAI-compatible chat upstream): a summary request made by the
 *   target model, answered as the latest user messages and the summary.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { compactErrors } from '../../../support/open-responses-schema.ts'
import { type ResponsesBed, startResponsesBed } from '../../../support/responses-bed.ts'

let bed: ResponsesBed
beforeAll(async () => {
  bed = await startResponsesBed({
    plans: { metered: { rpm: null, rpd: null, tpm: 1_000_000, models: ['*'] } },
  })
})
afterAll(() => bed.stop())

/** A Codex-like history: instructions, user turns, a tool call and its output, an answer. */
const HISTORY = {
  instructions: 'You are a coding agent.',
  input: [
    {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Fix the failing test in src/app.ts' }],
    },
    { type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"command":["npm","test"]}' },
    { type: 'function_call_output', call_id: 'call_1', output: '1 failing: expected 2, got 3' },
    {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'The off-by-one is in add().' }],
    },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Go ahead and fix it.' }] },
  ],
  tools: [
    {
      type: 'function',
      name: 'shell',
      description: 'Runs a command',
      parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } } },
      strict: false,
    },
  ],
  parallel_tool_calls: false,
}

const compact = (body: unknown, key = bed.key) =>
  fetch(`${bed.gw.url}/v1/responses/compact`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

describe('pass-through to an OpenAI Responses upstream', () => {
  test("the client's text reaches /responses/compact as written, its model edited", async () => {
    // `1.0`, an escape, spacing and an item without `type` are the client's; re-serialised they were not.
    const text =
      '{"model":"oair/text", "input":[{"role":"user","content":"caf\\u00e9"}],"temperature":1.0, "prompt_cache_key":"k\\u0031"}'
    const res = await compact(text)
    expect(res.status).toBe(200)
    await res.body?.cancel()
    expect(bed.responses.lastRequest()!.text).toBe(
      '{"model":"text", "input":[{"role":"user","content":"caf\\u00e9"}],"temperature":1.0, "prompt_cache_key":"k\\u0031"}',
    )
  })

  test("a field the compact endpoint does not take is sent as written, and the upstream's refusal names it: nothing left out in silence", async () => {
    const body = { model: 'oair/text', ...HISTORY, max_output_tokens: 99, store: false }
    const res = await compact(body)
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toMatchObject({ param: 'max_output_tokens' })
    expect(bed.responses.lastRequest()!.body).toEqual({ ...body, model: 'text' })
  })

  test("its /responses/compact answers, relayed; usage recorded under the model's id", async () => {
    const key = await bed.freshKey()
    const res = await compact({ model: 'oair/text', ...HISTORY }, key)
    expect(res.status).toBe(200)
    const body = (await res.json()) as any
    expect(compactErrors(body)).toEqual([])
    expect(body.output.at(-1)).toEqual({ id: 'cmp_fake', type: 'compaction', encrypted_content: 'fake:5' })
    const sent = bed.responses.lastRequest()!
    expect(sent.path).toBe('/v1/responses/compact')
    expect(sent.body).toEqual({ ...HISTORY, model: 'text' })
    expect(await bed.usageOf(key, 'oair/text')).toMatchObject({ requests: 1, completion_tokens: 42 })
  })

  test("under a key's request limit only: passed through uncapped (the compact endpoint refuses max_output_tokens)", async () => {
    const { id, key } = await bed.gw.key('compact-key-rpm', 'unlimited')
    await bed.gw.deps.store.setKeyLimits(id, {
      rpm: 100,
      rpd: null,
      tpm: null,
      tpd: null,
      budgetMicros: null,
      budgetPeriod: null,
      models: null,
    })
    const res = await compact({ model: 'oair/text', ...HISTORY }, key)
    expect(res.status).toBe(200)
    expect(compactErrors(await res.json())).toEqual([])
    const sent = bed.responses.lastRequest()!
    expect(sent.path).toBe('/v1/responses/compact')
    expect(sent.body).toEqual({ ...HISTORY, model: 'text' })
    expect(res.headers.get('x-switchyard-max-tokens')).toBeNull()
  })

  test('under a token limit: the summary streamed from /responses, answered in the compact shape', async () => {
    const key = await bed.freshKey('metered')
    const res = await compact({ model: 'oair/text', ...HISTORY }, key)
    expect(res.status).toBe(200)
    const body = (await res.json()) as any
    expect(compactErrors(body)).toEqual([])
    const sent = bed.responses.lastRequest()!
    expect(sent.path).toBe('/v1/responses')
    expect(sent.body).toMatchObject({ model: 'text', stream: true, tool_choice: 'none' })
    expect(typeof sent.body.max_output_tokens).toBe('number')
    expect(sent.body.input.at(-1).content).toContain('handoff summary')
    // The recorded answer ("OK") is the summary; the user messages before it, as they came.
    expect(body.output.map((i: any) => [i.role, i.content[0].text])).toEqual([
      ['user', 'Fix the failing test in src/app.ts'],
      ['user', 'Go ahead and fix it.'],
      ['user', 'Summary of the earlier conversation (compacted by Switchyard):\n\nOK'],
    ])
    expect((await bed.usageOf(key, 'oair/text'))?.requests).toBe(1)
  })
  test("under a token limit: the client's sampling fields reach the summary as they came (temperature was dropped)", async () => {
    const key = await bed.freshKey('metered')
    const fields = { temperature: 0.2, top_p: 0.5, user: 'u-7', prompt_cache_key: 'c-1' }
    const res = await compact({ model: 'oair/text', ...HISTORY, ...fields }, key)
    expect(res.status).toBe(200)
    await res.body?.cancel()
    const sent = bed.responses.lastRequest()!
    expect(sent.path).toBe('/v1/responses')
    expect(sent.body).toMatchObject({
      ...fields,
      instructions: HISTORY.instructions,
      stream: true,
      store: false,
    })
  })
})

describe('translated: a compaction made by the target model', () => {
  test('the demo: the latest user messages, then the summary; valid CompactResource; usage recorded', async () => {
    const key = await bed.freshKey()
    const res = await compact({ model: 'demo/echo', ...HISTORY }, key)
    expect(res.status).toBe(200)
    const body = (await res.json()) as any
    expect(compactErrors(body)).toEqual([])
    expect(body.object).toBe('response.compaction')
    const texts = body.output.map((i: any) => i.content[0].text)
    expect(texts.slice(0, 2)).toEqual(['Fix the failing test in src/app.ts', 'Go ahead and fix it.'])
    expect(texts[2]).toStartWith('Summary of the earlier conversation (compacted by Switchyard):\n\n')
    expect(body.usage.output_tokens).toBeGreaterThan(0)
    expect(await bed.usageOf(key, 'demo/echo')).toMatchObject({ requests: 1 })
  })

  test('an OpenAI-compatible chat upstream is sent the conversation, then the summary prompt; tools offered, none called', async () => {
    const res = await compact({ model: 'openai/gpt-4o-mini', ...HISTORY })
    expect(res.status).toBe(200)
    expect(compactErrors(await res.json())).toEqual([])
    const sent = bed.mock.stats.lastBody as any
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'You are a coding agent.' })
    expect(sent.messages.at(-1).content).toContain('handoff summary')
    expect(sent.tool_choice).toBe('none')
    expect(sent.tools.map((t: any) => t.function.name)).toEqual(['shell'])
    expect(sent.stream ?? false).toBe(false)
  })
})

const SHELL_TOOL = { type: 'function', name: 'shell', parameters: { type: 'object', properties: {} } }

describe('bad input: 400 naming the field, as /v1/responses refuses it, on every route; the upstream never asked', () => {
  const BAD: [Record<string, unknown>, string, string][] = [
    [{ input: 'hi', previous_response_id: 'resp_1' }, 'previous_response_id', 'unsupported_parameter'],
    [{ input: 'hi', conversation: 'conv_123' }, 'conversation', 'unsupported_parameter'],
    [{ input: 'hi', background: true }, 'background', 'unsupported_parameter'],
    [{ input: 'hi', store: true }, 'store', 'unsupported_value'],
    [{ input: 'hi', store: 'yes' }, 'store', 'invalid_type'],
    [{ input: 'hi', temperature: 'hot' }, 'temperature', 'invalid_type'],
    [{ input: 'hi', stream: 'yes' }, 'stream', 'invalid_type'],
    [{ input: 'hi', tool_choice: 'required' }, 'tool_choice', 'invalid_value'],
    [{ input: 'hi', stream: true }, 'stream', 'unsupported_value'],
    // The client's tool_choice is checked as sent, though the summary's is none.
    [{ input: 'hi', tools: [SHELL_TOOL], tool_choice: 42 }, 'tool_choice', 'invalid_type'],
    [
      { input: 'hi', tools: [SHELL_TOOL], tool_choice: { type: 'function', name: 'nope' } },
      'tool_choice',
      'invalid_value',
    ],
    [{ input: 42 }, 'input', 'invalid_type'],
    [{}, 'input', 'missing_required_parameter'],
    [{ input: [] }, 'input', 'missing_required_parameter'],
    [{ input: null }, 'input', 'missing_required_parameter'],
  ]
  for (const model of ['demo/echo', 'oair/text']) {
    test.each(BAD)(`${model} %j`, async (fields, param, code) => {
      const before = bed.responses.requests().length
      const res = await compact({ model, ...fields })
      expect(res.status).toBe(400)
      expect(((await res.json()) as any).error).toMatchObject({ param, code })
      expect(bed.responses.requests().length).toBe(before)
    })
  }

  test('no model: 400 naming model', async () => {
    const res = await compact({ input: 'hi' })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error.param).toBe('model')
  })

  test.each([
    [{ max_tokens: -1 }, 'max_tokens'],
    [{ messages: null }, 'messages'],
  ])(
    'translated: a Chat Completions field %j is refused as /v1/responses refuses it',
    async (fields, param) => {
      const res = await compact({ model: 'demo/echo', input: 'hi', ...fields })
      expect(res.status).toBe(400)
      expect(((await res.json()) as any).error).toMatchObject({ param, code: 'unknown_parameter' })
    },
  )

  test('translated: an unknown field is named in x-switchyard-dropped-params, as on /v1/responses', async () => {
    const res = await compact({ model: 'demo/echo', input: 'hi', foo: 1 })
    expect(res.status).toBe(200)
    await res.body?.cancel()
    expect(res.headers.get('x-switchyard-dropped-params')).toBe('foo')
  })
})

describe("Codex's compaction through /v1/responses (compaction_trigger), translated", () => {
  const TRIGGERED = { ...HISTORY, input: [...HISTORY.input, { type: 'compaction_trigger' }] }

  test('the answer carries exactly one compaction item (streamed and JSON), read back on the next turn', async () => {
    const streamed = await bed.post({ model: 'openai/gpt-4o-mini', ...TRIGGERED, stream: true })
    const events = (await streamed.text())
      .split('\n\n')
      .filter((f) => f.includes('data: '))
      .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)))
    const done = events.filter((e) => e.type === 'response.output_item.done' && e.item.type === 'compaction')
    expect(done).toHaveLength(1)
    expect(done[0].item.encrypted_content).toStartWith('switchyard.summary.v1:')
    // The chat upstream was asked for the summary in place of the trigger.
    expect((bed.mock.stats.lastBody as any).messages.at(-1).content).toContain('handoff summary')
    const json = (await (await bed.post({ model: 'demo/echo', ...TRIGGERED })).json()) as any
    const item = json.output.find((i: any) => i.type === 'compaction')
    expect(item.encrypted_content).toStartWith('switchyard.summary.v1:')
    // The next turn: the compaction item in place of the history it summarises.
    const next = await bed.post({
      model: 'openai/gpt-4o-mini',
      input: [item, { role: 'user', content: 'go on' }],
    })
    expect(next.status).toBe(200)
    const sent = (bed.mock.stats.lastBody as any).messages
    expect(sent[0].role).toBe('user')
    expect(sent[0].content).toStartWith('Summary of the earlier conversation (compacted by Switchyard):\n\n')
  })

  test("an upstream's own compaction item on a translated route: 400 naming its encrypted_content", async () => {
    const res = await bed.post({
      model: 'demo/echo',
      input: [
        { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAABpM0Yj' },
        { role: 'user', content: 'go on' },
      ],
    })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error.param).toBe('input[0].encrypted_content')
  })
})
