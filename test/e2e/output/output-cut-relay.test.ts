/**
 * Under a token limit the chat and Responses pass-throughs keep their byte relays (DESIGN §11,
 * issue 41's tokens row): an upstream that ignores `max_tokens` / `max_output_tokens` (3,000
 * tokens answered to a cap of 100) is counted and cut at the allowance on the relay itself, and
 * every event before the cut reaches the client byte for byte as the upstream wrote it — fields
 * the gateway does not know (`obfuscation`, as OpenAI sends it now) included. The stream then ends
 * as the translated path ends it (chat: `finish_reason: "length"`, the usage chunk, `[DONE]`;
 * Responses: the open part and item closed, `response.incomplete` / `max_output_tokens`), the
 * upstream is let go, and a JSON request is streamed upstream and assembled.
 *
 * The models' `upstream_name` is the client's id, so the relay's `model` swap writes the bytes it
 * read: what the client gets is comparable with what the upstream sent, event by event.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../../support/gateway.ts'

const CAP = 100
const ANSWER_DELTAS = 300
const DELTA = 'w '.repeat(10)

interface Sent {
  path: string
  body: Record<string, any>
  /** The events written so far, each with its blank line. */
  events: string[]
}

const sent: Sent[] = []

function chatEvents(model: string, includeUsage: boolean): { head: string[]; delta: (i: number) => string } {
  const base = `"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":${JSON.stringify(model)},"service_tier":"default","system_fingerprint":"fp_1"`
  const usage = includeUsage ? ',"usage":null' : ''
  return {
    head: [
      // As Python's json.dumps writes it (some compatible servers): spaces after ':' and ','.
      `data: {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1700000000, "model": ${JSON.stringify(model)}, "system_fingerprint": "fp_1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]${usage ? ', "usage": null' : ''}}\n\n`,
    ],
    // A JSON escape in the text (`\u0077` is "w"): a re-encoding would write the letter.
    delta: (i) =>
      `data: {${base},"choices":[{"index":0,"delta":{"content":"w w w w w w w w w \\u0077 "},"logprobs":null,"finish_reason":null}]${usage},"obfuscation":"o${i}"}\n\n`,
  }
}

function responsesEvents(model: string): { head: string[]; delta: (i: number) => string } {
  let seq = 0
  const ev = (type: string, o: string) =>
    `event: ${type}\ndata: {"type":"${type}",${o},"sequence_number":${seq++}}\n\n`
  const response = `{"id":"resp_1","object":"response","created_at":1700000000,"status":"in_progress","model":${JSON.stringify(model)},"output":[],"usage":null,"store":false}`
  const at = '"item_id":"msg_1","output_index":0,"content_index":0'
  return {
    head: [
      ev('response.created', `"response":${response}`),
      ev('response.in_progress', `"response":${response}`),
      ev(
        'response.output_item.added',
        '"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}',
      ),
      ev(
        'response.content_part.added',
        `${at},"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`,
      ),
    ],
    delta: (i) =>
      ev(
        'response.output_text.delta',
        `${at},"delta":${JSON.stringify(DELTA)},"logprobs":[],"obfuscation":"o${i}"`,
      ),
  }
}

let upstream: ReturnType<typeof Bun.serve>
let gw: TestGateway
let key: string

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      const body = (await req.json()) as Record<string, any>
      const record: Sent = { path, body, events: [] }
      sent.push(record)
      if (body.stream !== true)
        return Response.json({ error: { message: 'this upstream only streams' } }, { status: 400 })
      const wire =
        path === '/v1/responses'
          ? responsesEvents(body.model)
          : chatEvents(body.model, body.stream_options?.include_usage === true)
      const enc = new TextEncoder()
      let stopped = false
      // Ignores the cap: 3,000 tokens whatever it was asked, 10 a delta, paced so a cut stops it.
      const stream = new ReadableStream<Uint8Array>({
        async start(c) {
          // The opening and the first 15 deltas in one write: the cut (at 10) falls inside a read.
          const first = [...wire.head, ...Array.from({ length: 15 }, (_, i) => wire.delta(i))]
          record.events.push(...first)
          c.enqueue(enc.encode(first.join('')))
          for (let i = 15; i < ANSWER_DELTAS && !stopped; i++) {
            await Bun.sleep(2)
            if (stopped) return
            const e = wire.delta(i)
            record.events.push(e)
            c.enqueue(enc.encode(e))
          }
          c.close()
        },
        cancel() {
          stopped = true
        },
      })
      return new Response(stream, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } })
    },
  })
  const model = (name: string, upstreamName: string) => ({
    name,
    upstream_name: upstreamName,
    context_window: 100_000,
    max_output_tokens: 4_096,
    features: ['streaming', 'system_messages'],
  })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'up',
          kind: 'openai',
          base_url: `http://127.0.0.1:${upstream.port}/v1`,
          api_key: 'sk-up',
          models: [model('m', 'up/m')],
        },
        {
          prefix: 'upr',
          kind: 'openai',
          wire: 'responses',
          base_url: `http://127.0.0.1:${upstream.port}/v1`,
          api_key: 'sk-up',
          models: [model('r', 'upr/r')],
        },
      ],
      plans: { metered: { rpm: null, rpd: null, tpm: 100_000, models: ['*'] } },
      default_plan: 'metered',
    },
  })
  key = (await gw.key('relay', 'metered')).key
})

afterAll(async () => {
  await gw?.stop()
  upstream?.stop(true)
})

const post = (path: string, body: Record<string, unknown>) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/** The upstream stopped: it sent far fewer deltas than its 300 (the cut let it go). */
async function letGo(s: Sent): Promise<void> {
  let last = -1
  for (let i = 0; i < 100 && s.events.length !== last; i++) {
    last = s.events.length
    await Bun.sleep(50)
  }
  expect(s.events.length).toBeLessThan(ANSWER_DELTAS / 2)
}

const frames = (text: string) =>
  text
    .split('\n\n')
    .filter((f) => f !== '')
    .map((f) => `${f}\n\n`)

const dataOf = (frame: string) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as Record<string, any>

describe('a metered pass-through keeps its byte relay and is cut on it', () => {
  test('chat stream: the events before the cut are the upstream bytes; it ends as length, usage, [DONE]', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'up/m',
      messages: [{ role: 'user', content: 'count' }],
      max_tokens: CAP,
      stream: true,
      stream_options: { include_usage: true },
    })
    expect(res.status).toBe(200)
    const got = frames(await res.text())
    const up = sent.at(-1)!
    expect(up.path).toBe('/v1/chat/completions')
    // Passed through: the client's body, not a translation of it.
    expect(up.body.max_completion_tokens).toBe(CAP)
    expect(up.body.stream_options).toEqual({ include_usage: true })
    const ending = got.slice(-3)
    const relayed = got.slice(0, -3)
    expect(relayed.length).toBeGreaterThan(5)
    expect(relayed).toEqual(up.events.slice(0, relayed.length))
    expect(dataOf(ending[0]!).choices).toEqual([{ index: 0, delta: {}, finish_reason: 'length' }])
    const usage = dataOf(ending[1]!).usage
    expect(usage.completion_tokens).toBeGreaterThan(CAP - 20)
    expect(usage.completion_tokens).toBeLessThanOrEqual(CAP + 20)
    expect(ending[2]).toBe('data: [DONE]\n\n')
    await letGo(up)
  })

  test('Responses stream: the events before the cut are the upstream bytes; it ends incomplete at max_output_tokens', async () => {
    const res = await post('/v1/responses', {
      model: 'upr/r',
      input: 'count',
      max_output_tokens: CAP,
      stream: true,
    })
    expect(res.status).toBe(200)
    const got = frames(await res.text())
    const up = sent.at(-1)!
    expect(up.path).toBe('/v1/responses')
    const types = got.map((f) => dataOf(f).type)
    const ending = [
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.incomplete',
    ]
    expect(types.slice(-4)).toEqual(ending)
    const relayed = got.slice(0, -4)
    expect(relayed.length).toBeGreaterThan(5)
    expect(relayed).toEqual(up.events.slice(0, relayed.length))
    // Numbered on from the last event relayed, the text as relayed, the usage as counted.
    const seqs = got.map((f) => dataOf(f).sequence_number)
    expect(seqs).toEqual(seqs.map((_, i) => i))
    const text = relayed
      .map(dataOf)
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('')
    expect(dataOf(got.at(-4)!).text).toBe(text)
    const last = dataOf(got.at(-1)!).response
    expect(last.status).toBe('incomplete')
    expect(last.incomplete_details).toEqual({ reason: 'max_output_tokens' })
    expect(last.model).toBe('upr/r')
    expect(last.output[0].content[0].text).toBe(text)
    expect(last.usage.output_tokens).toBeGreaterThan(CAP - 20)
    expect(last.usage.output_tokens).toBeLessThanOrEqual(CAP + 20)
    await letGo(up)
  })

  test('chat and Responses JSON: streamed upstream, cut at the allowance and assembled', async () => {
    const chat = await post('/v1/chat/completions', {
      model: 'up/m',
      messages: [{ role: 'user', content: 'count' }],
      max_tokens: CAP,
    })
    expect(chat.status).toBe(200)
    const c = (await chat.json()) as Record<string, any>
    const upChat = sent.at(-1)!
    expect(upChat.body.stream).toBe(true)
    expect(upChat.body.stream_options).toEqual({ include_usage: true })
    expect(c.object).toBe('chat.completion')
    expect(c.model).toBe('up/m')
    expect(c.system_fingerprint).toBe('fp_1')
    expect(c.choices[0].finish_reason).toBe('length')
    const words = (s: string) => (s.match(/\bw\b/g) ?? []).length
    expect(words(c.choices[0].message.content)).toBeLessThanOrEqual(CAP)
    expect(words(c.choices[0].message.content)).toBeGreaterThan(CAP / 2)
    expect(c.usage.completion_tokens).toBeLessThanOrEqual(CAP + 20)
    await letGo(upChat)

    const resp = await post('/v1/responses', { model: 'upr/r', input: 'count', max_output_tokens: CAP })
    expect(resp.status).toBe(200)
    const r = (await resp.json()) as Record<string, any>
    const upResp = sent.at(-1)!
    expect(upResp.body.stream).toBe(true)
    expect(r.id).toBe('resp_1') // the upstream's response, not a translation's
    expect(r.status).toBe('incomplete')
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' })
    expect(r.model).toBe('upr/r')
    expect(words(r.output[0].content[0].text)).toBeLessThanOrEqual(CAP)
    expect(words(r.output[0].content[0].text)).toBeGreaterThan(CAP / 2)
    expect(r.usage.output_tokens).toBeLessThanOrEqual(CAP + 20)
    await letGo(upResp)
  })
})
