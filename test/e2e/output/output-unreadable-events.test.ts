/**
 * An upstream event whose data is not exactly one JSON value — a second value after the chunk,
 * text after it, a value that does not parse — is a malformed event (DESIGN §10): skipped and
 * counted, never relayed. Under a token limit the pass-through's gate parses every event to count
 * its text, and takes such an event as no chunk (nothing counted); the byte relay behind it once
 * checked only its shape and relayed it, model swapped, so text reached the client past the
 * count (stop 64, "Seen, and left"). Each same-wire relay under a limit — chat → openai,
 * Messages → anthropic, Responses → openai — must drop the event the gate did not count, and the
 * answer around it reach the client whole.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type FaultUpstream, startFaultUpstream, type Wire } from '../../support/fault-upstream.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'
import { beforeEach } from '../../support/hooks.ts'
import { readStream } from '../../support/read-stream.ts'

const model = (name: string) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 4096,
  features: ['streaming', 'system_messages'],
})

/** A Gemini upstream whose stream holds one event that is not a JSON object, between two that are. */
const GEMINI_EVENTS = [
  { candidates: [{ content: { role: 'model', parts: [{ text: 'one two' }] }, index: 0 }] },
  `{"candidates":[{"content":{"role":"model","parts":[{"text":" SECRET smuggled words"}]},"index":0}]} x`,
  {
    candidates: [{ content: { role: 'model', parts: [{ text: ' three' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 3, totalTokenCount: 6 },
  },
]
function startMalformedGemini() {
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () =>
      new Response(
        // A comment first: not an event with data, so not malformed (not counted).
        `: ping\r\n\r\n${GEMINI_EVENTS.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\r\n\r\n`).join('')}`,
        { headers: { 'content-type': 'text/event-stream' } },
      ),
  })
}

let up: FaultUpstream
let gemini: ReturnType<typeof startMalformedGemini>
let gw: TestGateway
let key: string
let openKey: string
beforeAll(async () => {
  up = await startFaultUpstream({ words: 12 })
  gemini = startMalformedGemini()
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'prime',
          kind: 'openai',
          base_url: `${up.url}/v1`,
          api_key: 'sk-prime',
          models: [model('gpt-solo')],
        },
        {
          prefix: 'claude',
          kind: 'anthropic',
          base_url: up.url,
          api_key: 'sk-ant',
          models: [model('claude-b')],
        },
        // The Responses wire to the upstream: Responses requests pass through.
        {
          prefix: 'resp',
          kind: 'openai',
          wire: 'responses',
          base_url: `${up.url}/v1`,
          api_key: 'sk-resp',
          models: [model('gpt-r')],
        },
        {
          prefix: 'g',
          kind: 'gemini',
          base_url: `http://127.0.0.1:${gemini.port}`,
          api_key: 'g-key',
          models: [model('flash')],
        },
      ],
      // A token limit: every answer goes through its pass-through's gate.
      plans: {
        metered: { rpm: null, rpd: null, tpm: 1_000_000, models: ['*'] },
        open: { rpm: null, rpd: null, models: ['*'] },
      },
      default_plan: 'metered',
    },
  })
  key = (await gw.key('metered', 'metered')).key
  openKey = (await gw.key('open', 'open')).key
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
  gemini.stop(true)
})

/** `switchyard_upstream_malformed_events_total` for `provider` (0 before the first). */
async function malformedTotal(provider: string): Promise<number> {
  const metrics = await (await fetch(`${gw.url}/metrics`)).text()
  const m = metrics.match(
    new RegExp(`switchyard_upstream_malformed_events_total\\{provider="${provider}"\\} (\\d+)`),
  )
  return m ? Number(m[1]) : 0
}
beforeEach(() => up.clear())

const SECRET = ' SECRET smuggled words'
const chatChunk = `{"id":"chatcmpl-fault","object":"chat.completion.chunk","created":1,"model":"gpt-solo","choices":[{"index":0,"delta":{"content":"${SECRET}"},"logprobs":null,"finish_reason":null}]}`
const messagesDelta = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${SECRET}"}}`
const responsesDelta = `{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_fault","output_index":0,"content_index":0,"delta":"${SECRET}"}`

/** The ways a line can hold more, or less, than one JSON value, each carrying text. */
const awkward: Array<[string, (json: string) => string]> = [
  ['a second value after it', (j) => `${j} {"x":1}`],
  ['text after it', (j) => `${j}x`],
  ['a value that does not parse (a trailing comma)', (j) => `${j.slice(0, -1)},}`],
]

const frames: Record<Wire, (data: string) => string> = {
  chat: (d) => `data: ${d}\n\n`,
  messages: (d) => `event: content_block_delta\ndata: ${d}\n\n`,
  responses: (d) => `event: response.output_text.delta\ndata: ${d}\n\n`,
}
const payload: Record<Wire, string> = { chat: chatChunk, messages: messagesDelta, responses: responsesDelta }
const target: Record<Wire, [string, string]> = {
  chat: ['prime/gpt-solo', 'gpt-solo'],
  messages: ['claude/claude-b', 'claude-b'],
  responses: ['resp/gpt-r', 'gpt-r'],
}

function post(wire: Wire, modelId: string): Promise<Response> {
  const turns = [{ role: 'user', content: 'count for me' }]
  const [path, body, headers] =
    wire === 'chat'
      ? ['/v1/chat/completions', { model: modelId, messages: turns, stream: true }, bearer(key)]
      : wire === 'messages'
        ? [
            '/v1/messages',
            {
              model: modelId,
              max_tokens: 200,
              stream: true,
              // What translation would strip: the request keeps its byte pass-through.
              system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
              messages: turns,
            },
            { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
          ]
        : ['/v1/responses', { model: modelId, input: turns, stream: true, store: false }, bearer(key)]
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

describe('an event that is not one JSON value is skipped under a limit, never relayed', () => {
  for (const wire of ['chat', 'messages', 'responses'] as const)
    for (const [name, make] of awkward)
      test(`${wire}: ${name}`, async () => {
        const [modelId, upstreamModel] = target[wire]
        up.script(
          { model: upstreamModel },
          { fault: 'malformed', after: 4, frame: frames[wire](make(payload[wire])) },
        )
        const prefix = modelId.split('/')[0]!
        const before = await malformedTotal(prefix)
        const res = await post(wire, modelId)
        expect(res.status).toBe(200)
        const body = await res.text()
        expect(body).not.toContain('SECRET')
        expect(readStream(wire, body)).toMatchObject({ text: up.answer(), complete: true, error: null })
        // Passed through: the upstream was asked on the client's own wire.
        expect(up.attempts().map((a) => a.wire)).toEqual([wire])
        // Skipped and counted (this request's one), as a malformed event is on every relay.
        expect(await malformedTotal(prefix)).toBe(before + 1)
      })
})

describe("Gemini's byte relay skips and counts an event that is not a JSON object", () => {
  for (const [plan, which] of [
    ['metered', () => key],
    ['open', () => openKey],
  ] as const)
    test(`${plan} key`, async () => {
      const before = await malformedTotal('g')
      const res = await fetch(`${gw.url}/v1beta/models/g/flash:streamGenerateContent?alt=sse`, {
        method: 'POST',
        headers: { 'x-goog-api-key': which(), 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'count for me' }] }] }),
      })
      const body = await res.text()
      expect(res.status, body).toBe(200)
      expect(body).not.toContain('SECRET')
      expect(body).toContain('STOP')
      expect(await malformedTotal('g')).toBe(before + 1)
    })
})
