/**
 * Translated answers field by field against the wire of the surface's own provider, for answer
 * shapes the other suites' upstreams do not make, driven through the real clients that accumulate
 * them (the Anthropic SDK's `finalMessage()`, the OpenAI SDK's stream helpers). The OpenAI
 * upstream is a local server answering as OpenAI does (`fake-openai-chat.ts`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { meteredPlan } from '../../support/config-doc.ts'
import {
  callThenTextAnswer,
  interleavedToolCallsAnswer,
  refusalAnswer,
  splitToolCallAnswer,
  startFakeOpenAIChat,
} from '../../support/fake-openai-chat.ts'
import type { FakeUpstream } from '../../support/fake-upstream.ts'
import { PLANS, startGateway, type TestGateway } from '../../support/gateway.ts'
import { parseAnthropicSSE } from '../../support/messages-bed.ts'

const FEATURES = ['streaming', 'tools', 'json_schema', 'system_messages', 'reasoning']
const model = (name: string) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 16_384,
  features: FEATURES,
})

const REFUSAL = ["I'm sorry, I can't", ' help with that.']
const NOTES = ['Set x to 1. ', 'It was 0 before; ', 'now it is 1.']
/** Where the `call-then-text` stream waits before its finish: released by the test. */
let paused = Promise.withResolvers<void>()

let gw: TestGateway
let openai: FakeUpstream<string>
let key: string
/** A key on a plan with token and money limits: its streams go through the output gate. */
let meteredKey: string

beforeAll(async () => {
  openai = await startFakeOpenAIChat({
    refusal: refusalAnswer(REFUSAL),
    interleaved: interleavedToolCallsAnswer(),
    'interleaved-note': interleavedToolCallsAnswer('Checking both.'),
    'split-call': splitToolCallAnswer('Setting x.'),
    'call-then-text': callThenTextAnswer(NOTES, () => paused.promise),
    // `{"x":`, the text, then the connection breaks before `1}`.
    'split-call-broken': {
      ...splitToolCallAnswer('Setting x.'),
      pause: {
        at: 4,
        until: async () => {
          await Bun.sleep(100)
          throw new Error('upstream gone')
        },
      },
    },
  })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      providers: [
        {
          prefix: 'oa',
          kind: 'openai',
          base_url: `${openai.url}/v1`,
          api_key: 'sk-up',
          models: [
            model('refusal'),
            model('interleaved'),
            model('interleaved-note'),
            model('split-call'),
            model('call-then-text'),
            model('split-call-broken'),
          ],
        },
      ],
      plans: { ...PLANS, metered: meteredPlan() },
      default_plan: 'unlimited',
    },
  })
  key = (await gw.key('fidelity', 'unlimited')).key
  meteredKey = (await gw.key('fidelity-metered', 'metered')).key
})
afterAll(async () => {
  await gw?.stop()
  await openai?.stop()
})

const anthropic = (apiKey = key) => new Anthropic({ baseURL: gw.url, apiKey, maxRetries: 0 })
/** `body` as a stream request to /v1/messages, read raw. */
const rawStream = (apiKey: string, body: object) =>
  fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ ...body, stream: true }),
  })
const ask = { max_tokens: 256, messages: [{ role: 'user' as const, content: 'Something unsafe' }] }

describe('Messages answered by an OpenAI-compatible upstream', () => {
  test('a refusal (message.refusal / delta.refusal) is the text of the message, stop_reason refusal', async () => {
    const want = REFUSAL.join('')
    const created = await anthropic().messages.create({ model: 'oa/refusal', ...ask })
    expect(created.content.map(stripNull)).toEqual([{ type: 'text', text: want }])
    expect(created.stop_reason).toBe('refusal')

    const streamed = await anthropic()
      .messages.stream({ model: 'oa/refusal', ...ask })
      .finalMessage()
    expect(streamed.content.map(stripNull)).toEqual([{ type: 'text', text: want }])
    expect(streamed.stop_reason).toBe('refusal')
    expect(streamed.stop_sequence).toBeNull()
    expect(streamed.usage).toMatchObject({ input_tokens: 20, output_tokens: 9 })

    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'oa/refusal', stream: true, ...ask }),
    })
    const events = parseAnthropicSSE(await res.text()).filter((e) => e.event !== 'ping')
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    expect(events[1]!.data).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    })
    expect(events.slice(2, 4).map((e) => e.data.delta)).toEqual(
      REFUSAL.map((text) => ({ type: 'text_delta', text })),
    )
    expect(events[5]!.data.delta).toEqual({ stop_reason: 'refusal', stop_sequence: null })
  })
})

// OpenAI's wire lets parallel calls interleave by `index` (call 1 opens before call 0's arguments
// end). Messages blocks cannot interleave: each call's arguments must stay in its own block.
describe('interleaved parallel tool calls from an OpenAI-compatible upstream', () => {
  const WANT = [
    { id: 'call_weather', name: 'get_weather', input: { city: 'Paris' } },
    { id: 'call_time', name: 'get_time', input: { tz: 'CET' } },
  ]
  const tools = [
    {
      name: 'get_weather',
      input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
    },
    { name: 'get_time', input_schema: { type: 'object' as const, properties: { tz: { type: 'string' } } } },
  ]
  const setX = {
    name: 'set_x',
    input_schema: { type: 'object' as const, properties: { x: { type: 'number' } } },
  }
  /** A message's blocks as the split-call tests read them: a call's id and input, a text's text. */
  const callsAndText = (m: Anthropic.Message) =>
    m.content.map((b: any) => (b.type === 'tool_use' ? { id: b.id, input: b.input } : b.text))

  test('Messages: each tool_use block gets its own call’s arguments, streamed and not', async () => {
    const req = { model: 'oa/interleaved', ...ask, tools }
    const created = await anthropic().messages.create(req)
    expect(created.content.map(({ id, name, input }: any) => ({ id, name, input }))).toEqual(WANT)
    for (const apiKey of [key, meteredKey]) {
      const streamed = await anthropic(apiKey).messages.stream(req).finalMessage()
      expect(streamed.content.map(({ id, name, input }: any) => ({ id, name, input }))).toEqual(WANT)
      expect(streamed.stop_reason).toBe('tool_use')
    }

    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...req, stream: true }),
    })
    const events = parseAnthropicSSE(await res.text()).filter((e) => e.event !== 'ping')
    // Blocks in order, never interleaved: start i … stop i, then start i+1.
    const blocks = events.filter((e) => e.event.startsWith('content_block_'))
    expect(blocks.map((e) => `${e.event.slice(14)} ${e.data.index}`)).toEqual([
      'start 0',
      'delta 0',
      'delta 0',
      'stop 0',
      'start 1',
      'delta 1',
      'stop 1',
    ])
  })

  test('Messages: text between the calls’ deltas keeps each call’s arguments whole (streamed, metered too)', async () => {
    const req = { model: 'oa/interleaved-note', ...ask, tools }
    for (const apiKey of [key, meteredKey]) {
      const streamed = await anthropic(apiKey).messages.stream(req).finalMessage()
      const uses = streamed.content.filter((b) => b.type === 'tool_use')
      expect(uses.map(({ id, name, input }: any) => ({ id, name, input }))).toEqual(WANT)
      expect(streamed.content.filter((b) => b.type === 'text').map((b: any) => b.text)).toEqual([
        'Checking both.',
      ])
      expect(streamed.stop_reason).toBe('tool_use')
    }
  })

  test('Messages: text splitting one call’s arguments (no interleaving) keeps them whole; the text follows the call (streamed, metered too)', async () => {
    const req = { model: 'oa/split-call', ...ask, tools: [setX] }
    for (const apiKey of [key, meteredKey]) {
      const streamed = await anthropic(apiKey).messages.stream(req).finalMessage()
      expect(callsAndText(streamed)).toEqual([{ id: 'call_x', input: { x: 1 } }, 'Setting x.'])
      expect(streamed.stop_reason).toBe('tool_use')
    }
  })

  test('Messages: text after a call whose arguments are whole streams at once, not at the answer’s end (metered too)', async () => {
    const req = { model: 'oa/call-then-text', ...ask, tools: [setX] }
    for (const apiKey of [key, meteredKey]) {
      // The upstream waits before its finish until the client has the three text deltas (or 5 s).
      paused = Promise.withResolvers<void>()
      const res = await rawStream(apiKey, req)
      const giveUp = setTimeout(() => paused.resolve(), 5_000)
      let text = ''
      let beforeEnd = false
      const decoder = new TextDecoder()
      for await (const bytes of res.body!) {
        text += decoder.decode(bytes, { stream: true })
        const done = text.slice(0, text.lastIndexOf('\n\n') + 2)
        const deltas = parseAnthropicSSE(done).filter((e) => e.data.delta?.type === 'text_delta')
        if (!beforeEnd && deltas.length === NOTES.length && !done.includes('message_delta')) {
          beforeEnd = true
          paused.resolve()
        }
      }
      clearTimeout(giveUp)
      expect(beforeEnd).toBe(true)
      const events = parseAnthropicSSE(text).filter((e) => e.event !== 'ping')
      const blocks = events.filter((e) => e.event.startsWith('content_block_'))
      expect(blocks.map((e) => `${e.event.slice(14)} ${e.data.index}`)).toEqual([
        'start 0',
        'delta 0',
        'stop 0',
        'start 1',
        'delta 1',
        'delta 1',
        'delta 1',
        'stop 1',
      ])
      expect(blocks[1]!.data.delta).toEqual({ type: 'input_json_delta', partial_json: '{"x":1}' })
      expect(blocks.slice(4, 7).map((e) => e.data.delta.text)).toEqual(NOTES)

      paused.resolve()
      const streamed = await anthropic(apiKey).messages.stream(req).finalMessage()
      expect(callsAndText(streamed)).toEqual([{ id: 'call_x', input: { x: 1 } }, NOTES.join('')])
      expect(streamed.stop_reason).toBe('tool_use')
    }
  })

  test('Messages: text held behind a call whose arguments never end is sent before the error event (metered too)', async () => {
    for (const apiKey of [key, meteredKey]) {
      const res = await rawStream(apiKey, { model: 'oa/split-call-broken', ...ask })
      expect(res.status).toBe(200)
      const events = parseAnthropicSSE(await res.text()).filter((e) => e.event !== 'ping')
      // Counted as relayed (the ledger's `relayedBytes`), so sent: the text, then the error.
      expect(events.map((e) => e.event + (e.data.delta?.type ? ` ${e.data.delta.type}` : ''))).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta input_json_delta',
        'content_block_stop',
        'content_block_start',
        'content_block_delta text_delta',
        'content_block_stop',
        'error',
      ])
      expect(events[5]!.data.delta.text).toBe('Setting x.')
    }
  })

  test('Responses and Gemini: each call’s arguments whole', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 })
    const functions = tools.map((t) => ({
      type: 'function' as const,
      name: t.name,
      parameters: t.input_schema,
      strict: false,
    }))
    const response = await client.responses
      .stream({ model: 'oa/interleaved', input: 'Weather and time?', tools: functions })
      .finalResponse()
    expect(
      response.output.map((o: any) => ({ id: o.call_id, name: o.name, input: JSON.parse(o.arguments) })),
    ).toEqual(WANT)

    const res = await fetch(
      `${gw.url}/v1beta/models/oa/interleaved:streamGenerateContent?alt=sse&key=${key}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          contents: [{ role: 'user', parts: [{ text: 'Weather and time?' }] }],
          tools: [{ functionDeclarations: tools.map((t) => ({ name: t.name, parameters: t.input_schema })) }],
        }),
      },
    )
    expect(res.status).toBe(200)
    const calls = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .flatMap((l) => JSON.parse(l.slice(6)).candidates?.[0]?.content?.parts ?? [])
      .filter((p: any) => p.functionCall)
      .map((p: any) => ({ name: p.functionCall.name, input: p.functionCall.args }))
    expect(calls).toEqual(WANT.map(({ name, input }) => ({ name, input })))
  })
})

/** A content block without the fields the SDK types say may be null (`citations`). */
function stripNull(block: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(block).filter(([, v]) => v !== null))
}
