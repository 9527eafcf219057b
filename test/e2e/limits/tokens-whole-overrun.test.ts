/**
 * An upstream that ignores both `stream` and the cap (DESIGN §11: "an upstream that ignores the
 * cap is cut at the allowance", "whatever the request or the upstream does"), for a model that
 * lists `streaming`: a plain OpenAI-compatible server that answers every request with one whole
 * JSON completion of 600 tokens. Its answer is whole when it arrives, so the upstream bills it all
 * (the operator's loss, as for a model without `streaming`), but the gateway reads it as the
 * stream it stands for and cuts it at the allowance like any stream: the client gets the text up to
 * the allowance, never past it, and the account is charged the text it got — on the chat
 * pass-through (JSON and stream), and on Messages and Responses translated to it. An uncapped
 * request's hold grows from its first slice only as far as the limit leaves. The upstream bills
 * like OpenAI (billing-upstream.ts: a word a token).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { answerText } from '../../support/answer-text.ts'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

const ANSWER = 600
const CAP = 50
const TEXT = 'count these words for the billing upstream which bills one token for each word'
const open = { rpm: null, rpd: null, models: ['*'] }

let gw: TestGateway
let up: BillingUpstream

beforeAll(async () => {
  up = await startBillingUpstream({
    jsonOnly: true,
    ignoreCap: true,
    answerTokens: ANSWER,
    word: 'hello',
    defaultMax: 16_000,
  })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'plain',
          kind: 'openai',
          base_url: up.url,
          api_key: 'sk-upstream',
          models: [
            {
              name: 'says',
              context_window: 128_000,
              max_output_tokens: 16_000,
              features: ['streaming', 'system_messages'],
            },
          ],
        },
      ],
      plans: { t: { ...open, tpm: 200_000 }, small: { ...open, tpm: 400 } },
      default_plan: 't',
    },
  })
}, 30_000)

afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

type Surface = 'chat' | 'responses' | 'messages'

function ask(surface: Surface, key: string, max: number | null, stream: boolean): Promise<Response> {
  const headers = { ...bearer(key), 'content-type': 'application/json' }
  const cap = max === null ? {} : surface === 'responses' ? { max_output_tokens: max } : { max_tokens: max }
  const model = 'plain/says'
  const body =
    surface === 'responses'
      ? { model, input: TEXT, stream, ...cap }
      : { model, messages: [{ role: 'user', content: TEXT }], stream, ...cap }
  const path = { chat: 'chat/completions', responses: 'responses', messages: 'messages' }[surface]
  return fetch(`${gw.url}/v1/${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
}

/** The account's minute once its request settled (the usage flush). */
async function settled(key: string): Promise<any> {
  const deadline = performance.now() + 20_000
  for (;;) {
    const u = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
    if ((u.usage?.current_minute?.tokens ?? 0) > 0 && (u.usage.current_minute.reserved_tokens ?? 0) === 0)
      return u
    if (performance.now() > deadline) return u
    await Bun.sleep(25)
  }
}

const words = (s: string) => s.split(/\s+/).filter(Boolean).length

describe('an upstream that ignores stream and the cap, for a model that lists streaming', () => {
  for (const surface of ['chat', 'responses', 'messages'] as const)
    for (const stream of [false, true])
      test(`${surface} ${stream ? 'stream' : 'JSON'} capped at ${CAP}: the text cut at the allowance, the account charged no more`, async () => {
        const { key } = await gw.key(`cap-${surface}-${stream}`, 't')
        const from = up.bills.length
        const res = await ask(surface, key, CAP, stream)
        const body = await res.text()
        expect(res.status, body).toBe(200)
        expect(res.headers.get('x-switchyard-attempts')).toBe('1')
        // The upstream billed its whole answer (whole when it arrived: the operator's loss).
        expect(up.bills.slice(from).map((b) => b.output)).toEqual([ANSWER])
        const got = words(answerText(surface, body, stream))
        // Cut at the allowance: not past it, and not emptied either (a word is a token).
        expect(got).toBeLessThanOrEqual(CAP)
        expect(got).toBeGreaterThanOrEqual(CAP - 5)
        const u = await settled(key)
        const input = up.bills[from]!.input
        // Charged the text it got: within the cap past the input as the gateway bounds it.
        expect(u.usage.current_minute.tokens).toBeLessThanOrEqual(input + 40 + CAP)
        expect(u.usage.current_minute.tokens).toBeGreaterThanOrEqual(got)
      })

  for (const stream of [false, true])
    test(`chat ${stream ? 'stream' : 'JSON'} uncapped on TPM 400: the hold grows only as far as the limit, the text and the charge stay within it`, async () => {
      const { key } = await gw.key(`small-${stream}`, 'small')
      const res = await ask('chat', key, null, stream)
      const body = await res.text()
      expect(res.status, body).toBe(200)
      const got = words(answerText('chat', body, stream))
      expect(got).toBeGreaterThan(200)
      expect(got).toBeLessThan(400)
      const u = await settled(key)
      expect(u.usage.current_minute.tokens).toBeLessThanOrEqual(400)
      expect(u.usage.current_minute.tokens).toBeGreaterThanOrEqual(got)
    })
})
