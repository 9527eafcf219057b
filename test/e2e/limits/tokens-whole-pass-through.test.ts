/**
 * Servers that ignore `stream` on the Messages, Responses and Gemini wires (an Anthropic-, a
 * Responses- or a Gemini-compatible server that answers one whole JSON body whatever it is asked:
 * Gemini's ignoring `:streamGenerateContent?alt=sse`), on those surfaces' pass-throughs: the answer is read as the events it stands for, like an OpenAI-kind
 * server's on chat — a stream request gets the wire's stream, and under a token limit (a stream,
 * or a JSON request, which is asked as one) the text is cut at the allowance, the account charged
 * what the client got; a chat request translated to the Anthropic or the Gemini wire likewise. The servers ignore the cap too and bill like the providers: input a word a
 * token plus 8 a message, output a word a token, the whole answer.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { answerText } from '../../support/answer-text.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

const ANSWER = 300
const CAP = 50
const TEXT = 'count these words for the billing upstream which bills one token for each word'
const open = { rpm: null, rpd: null, models: ['*'] }

let gw: TestGateway
let up: ReturnType<typeof Bun.serve>
/** Each answer's bill, and whether it was asked for a stream. */
const bills: Array<{ input: number; output: number; stream: boolean }> = []

const words = (s: string) => s.split(/\s+/).filter(Boolean).length
const answer = Array.from({ length: ANSWER }, () => 'hello').join(' ')

beforeAll(async () => {
  up = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const body = (await req.json()) as Record<string, any>
      const input = words(JSON.stringify(body.messages ?? body.input ?? body.contents)) + 8
      const gemini = url.pathname.startsWith('/v1beta/')
      bills.push({
        input,
        output: ANSWER,
        stream: gemini ? url.pathname.endsWith(':streamGenerateContent') : body.stream === true,
      })
      if (gemini)
        return Response.json({
          candidates: [
            {
              content: {
                role: 'model',
                parts: [{ text: 'a short thought', thought: true }, { text: answer }],
              },
              finishReason: 'STOP',
              index: 0,
            },
          ],
          usageMetadata: {
            promptTokenCount: input,
            candidatesTokenCount: ANSWER,
            totalTokenCount: input + ANSWER,
          },
          modelVersion: 'm',
          responseId: 'r1',
        })
      if (url.pathname === '/v1/messages')
        return Response.json({
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [
            { type: 'thinking', thinking: 'a short thought', signature: 'sig' },
            { type: 'text', text: answer },
          ],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: input, output_tokens: ANSWER },
        })
      return Response.json({
        id: 'resp_1',
        object: 'response',
        created_at: 1_700_000_000,
        status: 'completed',
        model: body.model,
        output: [
          {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: answer, annotations: [] }],
          },
        ],
        usage: { input_tokens: input, output_tokens: ANSWER, total_tokens: input + ANSWER },
      })
    },
  })
  const model = {
    name: 'm',
    context_window: 128_000,
    max_output_tokens: 16_000,
    features: ['streaming', 'system_messages'],
  }
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'ant',
          kind: 'anthropic',
          base_url: `http://127.0.0.1:${up.port}`,
          api_key: 'sk-a',
          models: [model],
        },
        {
          prefix: 'gem',
          kind: 'gemini',
          base_url: `http://127.0.0.1:${up.port}`,
          api_key: 'sk-g',
          models: [model],
        },
        {
          prefix: 'resp',
          kind: 'openai',
          wire: 'responses',
          base_url: `http://127.0.0.1:${up.port}/v1`,
          api_key: 'sk-r',
          models: [model],
        },
      ],
      plans: { dev: open, t: { ...open, tpm: 200_000 } },
      default_plan: 'dev',
    },
  })
}, 30_000)

afterAll(async () => {
  await gw?.stop()
  up?.stop(true)
})

type Surface = 'messages' | 'responses' | 'gemini'

function ask(surface: Surface, key: string, stream: boolean): Promise<Response> {
  if (surface === 'gemini')
    return fetch(
      `${gw.url}/v1beta/models/gem/m:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
      {
        method: 'POST',
        headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({
          contents: [{ role: 'user', parts: [{ text: TEXT }] }],
          generationConfig: { maxOutputTokens: CAP },
        }),
      },
    )
  const headers = { ...bearer(key), 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }
  const body =
    surface === 'responses'
      ? { model: 'resp/m', input: TEXT, stream, max_output_tokens: CAP }
      : { model: 'ant/m', messages: [{ role: 'user', content: TEXT }], stream, max_tokens: CAP }
  return fetch(`${gw.url}/v1/${surface}`, { method: 'POST', headers, body: JSON.stringify(body) })
}

async function settled(key: string): Promise<any> {
  const deadline = performance.now() + 20_000
  for (;;) {
    const u = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
    if ((u.usage?.current_minute?.tokens ?? 0) > 0 || performance.now() > deadline) return u
    await Bun.sleep(25)
  }
}

/** The answer's text (thoughts left out) a client got from the Gemini surface: JSON or its stream's. */
function geminiText(body: string, stream: boolean): string {
  const responses = stream
    ? body
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)))
    : [JSON.parse(body)]
  return responses
    .flatMap((r: any) => r.candidates?.[0]?.content?.parts ?? [])
    .filter((p: any) => !p.thought)
    .map((p: any) => p.text ?? '')
    .join('')
}

const text = (surface: Surface, body: string, stream: boolean) =>
  surface === 'gemini' ? geminiText(body, stream) : answerText(surface, body, stream)

describe('a server that ignores stream on the Messages, Responses and Gemini wires', () => {
  for (const surface of ['messages', 'responses', 'gemini'] as const) {
    test(`${surface} stream, no limit: the JSON answer relayed as the wire's stream, in one attempt`, async () => {
      const { key } = await gw.key(`dev-${surface}`, 'dev')
      const res = await ask(surface, key, true)
      const body = await res.text()
      expect(res.status, body).toBe(200)
      expect(res.headers.get('content-type')).toContain('text/event-stream')
      expect(res.headers.get('x-switchyard-attempts')).toBe('1')
      expect(words(text(surface, body, true))).toBe(ANSWER)
      if (surface === 'gemini') expect(body).toContain('"finishReason":"STOP"')
      else expect(body).toContain(surface === 'messages' ? 'event: message_stop' : 'response.completed')
      if (surface === 'messages') expect(body).toContain('"signature_delta"')
    })

    for (const stream of [false, true])
      test(`${surface} ${stream ? 'stream' : 'JSON'} capped at ${CAP} on a token limit: the text cut at the allowance, the account charged no more`, async () => {
        const { key } = await gw.key(`t-${surface}-${stream}`, 't')
        const from = bills.length
        const res = await ask(surface, key, stream)
        const body = await res.text()
        expect(res.status, body).toBe(200)
        expect(res.headers.get('x-switchyard-attempts')).toBe('1')
        expect(bills.slice(from).map((b) => b.stream)).toEqual([true])
        const got = words(text(surface, body, stream))
        expect(got).toBeLessThanOrEqual(CAP)
        // Cut inside the text, not emptied: Claude's and Gemini's text is counted with a calibrated
        // bound (an upper bound, above a word a token), OpenAI's with o200k (a word a token here).
        expect(got).toBeGreaterThanOrEqual(surface === 'responses' ? CAP - 10 : 15)
        const u = await settled(key)
        expect(u.usage.current_minute.tokens).toBeLessThanOrEqual(bills[from]!.input + 40 + CAP)
      })
  }

  for (const [prefix, stream] of [
    ['ant', false],
    ['ant', true],
    ['gem', false],
    ['gem', true],
  ] as const)
    test(`chat ${stream ? 'stream' : 'JSON'} translated to the ${prefix === 'ant' ? 'Anthropic' : 'Gemini'} wire, capped at ${CAP} on a token limit: read as its events, cut at the allowance`, async () => {
      const { key } = await gw.key(`t-chat-${prefix}-${stream}`, 't')
      const from = bills.length
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({
          model: `${prefix}/m`,
          messages: [{ role: 'user', content: TEXT }],
          stream,
          max_tokens: CAP,
        }),
      })
      const body = await res.text()
      expect(res.status, body).toBe(200)
      expect(res.headers.get('x-switchyard-attempts')).toBe('1')
      expect(bills.slice(from).map((b) => b.stream)).toEqual([true])
      const got = words(answerText('chat', body, stream))
      expect(got).toBeLessThanOrEqual(CAP)
      expect(got).toBeGreaterThanOrEqual(15)
      if (stream) expect(body).toContain('data: [DONE]')
      const u = await settled(key)
      expect(u.usage.current_minute.tokens).toBeLessThanOrEqual(bills[from]!.input + 40 + CAP)
    })

  test("the SDKs read the streams whole: Anthropic's finalMessage() (thinking signed), OpenAI's responses.stream().finalResponse()", async () => {
    const { key } = await gw.key('sdk', 'dev')
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 })
    const message = await anthropic.messages
      .stream({ model: 'ant/m', max_tokens: CAP, messages: [{ role: 'user', content: TEXT }] })
      .finalMessage()
    expect(message.content.map((b: any) => b.type)).toEqual(['thinking', 'text'])
    expect((message.content[0] as any).signature).toBe('sig')
    expect((message.content[1] as any).text).toBe(answer)
    expect(message.stop_reason).toBe('end_turn')
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 })
    const response = await openai.responses.stream({ model: 'resp/m', input: TEXT }).finalResponse()
    expect(response.output_text).toBe(answer)
    expect(response.status).toBe('completed')
  })
})
