/**
 * A stream request whose fallback does not list `streaming` (DESIGN §3: a model supports exactly
 * the features listed): when the primary fails before content, the fallback is asked for JSON —
 * never for a stream — and its answer is served as the client's stream (the events it stands for),
 * on every surface, with and without a token limit; under one it is counted and cut at the
 * allowance like any stream, the request holding the whole cap (a model that may answer does not
 * stream: its answer cannot grow a hold). The upstream bills like OpenAI (billing-upstream.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

const TEXT = 'count these words for the billing upstream which bills one token for each word'
const open = { rpm: null, rpd: null, models: ['*'] }

let gw: TestGateway
let up: BillingUpstream
/** A port nothing listens on: the primary's connection is refused (transient: fail over). */
let dead: ReturnType<typeof Bun.serve>

beforeAll(async () => {
  up = await startBillingUpstream({
    answerTokens: 80,
    word: 'hello',
    defaultMax: 16_000,
    // `cutter` breaks its stream after 20 tokens, without usage: a continuation takes over.
    fault: (model) => (model === 'cutter' ? { cut: 20 } : undefined),
  })
  dead = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('down', { status: 503 }) })
  const model = (name: string, features: string[], fallbacks: string[] = []) => ({
    name,
    context_window: 128_000,
    max_output_tokens: 16_000,
    features,
    fallbacks,
  })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'down',
          kind: 'openai',
          base_url: `http://127.0.0.1:${dead.port}/v1`,
          api_key: 'sk-down',
          retry: { attempts: 0, backoff_ms: 1, max_backoff_ms: 1 },
          circuit: { failures: 1000, cooldown_s: 1 },
          models: [model('s', ['streaming', 'system_messages'], ['plain/json'])],
        },
        {
          prefix: 'plain',
          kind: 'openai',
          base_url: up.url,
          api_key: 'sk-upstream',
          models: [
            model('json', ['system_messages']),
            model('cutter', ['streaming', 'system_messages'], ['plain/json-prefill']),
            model('json-prefill', ['system_messages', 'prefill']),
          ],
        },
      ],
      plans: { dev: open, t: { ...open, tpm: 200_000 } },
      default_plan: 'dev',
    },
  })
}, 30_000)

afterAll(async () => {
  await gw?.stop()
  await up?.stop()
  dead?.stop(true)
})

type Surface = 'chat' | 'responses' | 'messages'

function ask(surface: Surface, key: string, max: number): Promise<Response> {
  const headers = { ...bearer(key), 'content-type': 'application/json' }
  const model = 'down/s'
  const cap = surface === 'responses' ? { max_output_tokens: max } : { max_tokens: max }
  const body =
    surface === 'responses'
      ? { model, input: TEXT, stream: true, ...cap }
      : { model, messages: [{ role: 'user', content: TEXT }], stream: true, ...cap }
  const path = { chat: 'chat/completions', responses: 'responses', messages: 'messages' }[surface]
  return fetch(`${gw.url}/v1/${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
}

const END = { chat: 'data: [DONE]', responses: 'response.completed', messages: 'message_stop' }

describe('a stream request failed over to a fallback without streaming', () => {
  for (const plan of ['dev', 't'])
    for (const surface of ['chat', 'responses', 'messages'] as const)
      test(`${surface} on ${plan}: the fallback asked for JSON, its answer served as the stream`, async () => {
        const { key } = await gw.key(`${plan}-${surface}`, plan)
        const from = up.bills.length
        const res = await ask(surface, key, 300)
        const text = await res.text()
        expect(res.status, text).toBe(200)
        expect(res.headers.get('content-type')).toContain('text/event-stream')
        expect(res.headers.get('x-switchyard-attempts')).toBe('2')
        expect(up.bills.slice(from).map((b) => b.stream)).toEqual([false])
        // The whole answer, once (Responses repeats it in its `.done` events: the deltas are counted).
        const deltas = text
          .split('\n')
          .filter((l) => surface !== 'responses' || l.includes('output_text.delta'))
        expect(deltas.join('\n').match(/hello/g)?.length).toBe(80)
        expect(text).toContain(END[surface])
        if (plan !== 't') return
        // Settled to the fallback's bill (its usage), as a JSON answer of it would be.
        const bill = up.bills[from]!
        const deadline = performance.now() + 20_000
        let u: any
        do {
          u = await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()
          if (u.usage.current_minute.tokens === bill.input + bill.output) break
          await Bun.sleep(25)
        } while (performance.now() < deadline)
        expect(u.usage.current_minute.tokens).toBe(bill.input + bill.output)
      })
})

test('a stream cut after content continues on a prefill fallback without streaming: asked for JSON, spliced into the stream', async () => {
  const { key } = await gw.key('continued', 't')
  const from = up.bills.length
  const seen = up.seen.length
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'plain/cutter',
      messages: [{ role: 'user', content: TEXT }],
      stream: true,
    }),
  })
  const text = await res.text()
  expect(res.status, text).toBe(200)
  expect(text).toContain('data: [DONE]')
  expect(text).not.toContain('"error"')
  expect(up.bills.slice(from).map((b) => b.stream)).toEqual([true, false])
  expect(up.seen.slice(seen).map((s) => s.model)).toEqual(['cutter', 'json-prefill'])
  expect(up.seen[seen + 1]!.prefill?.trim().split(' ').length).toBe(20)
})
