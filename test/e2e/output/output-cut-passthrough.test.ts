/**
 * The cut at the allowance on the Messages pass-through (DESIGN §11, issue 41): a request that
 * translation would strip — a thinking block and `cache_control`, as Claude Code sends every turn —
 * keeps its byte pass-through to an anthropic provider under a token limit, and an upstream that
 * ignores its `max_tokens` (3,000 tokens answered to a cap of 1,500: with thinking on, Anthropic takes no cap at or below the 1,024-token budget) is still cut at the allowance:
 * the stream ends as Anthropic ends it at max_tokens (`message_delta` `stop_reason: "max_tokens"`,
 * `message_stop`), the upstream is let go and bills within the limit, and the thinking block's
 * signature reaches the client as the upstream sent it. A JSON request is streamed upstream and
 * assembled, cut the same way.
 */
import { describe, expect, test } from 'bun:test'
import { type Backend, backends } from '../../support/backends.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'
import {
  type MeteredUpstream,
  startMeteredUpstream,
  THINKING_SIGNATURE,
} from '../../support/metered-upstream.ts'

const CAP = 1_500
const TPM = 2_000
const ANSWER = 3_000

let up: MeteredUpstream | undefined
let gw: TestGateway | undefined
afterEach(async () => {
  await gw?.stop()
  await up?.stop()
  gw = undefined
  up = undefined
})

async function start(backend: Backend): Promise<{ gw: TestGateway; up: MeteredUpstream; key: string }> {
  up = await startMeteredUpstream({ answerTokens: ANSWER, delayMs: 2, ignoreCap: true })
  gw = await startGateway({
    backend: await backend.fresh(),
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'ant',
          kind: 'anthropic',
          base_url: up.url,
          api_key: 'sk-ant-up',
          models: [
            {
              name: 'claude',
              context_window: 200_000,
              max_output_tokens: 8_192,
              features: ['streaming', 'system_messages', 'reasoning'],
            },
          ],
        },
      ],
      plans: { metered: { rpm: null, rpd: null, tpm: TPM, models: ['*'] } },
      default_plan: 'metered',
    },
  })
  const { key } = await gw.key('coder', 'metered')
  return { gw, up, key }
}

/** Claude Code's shape: a cached system prompt, thinking enabled, and a thinking block (signed) in the history. */
const body = (stream: boolean) => ({
  model: 'ant/claude',
  max_tokens: CAP,
  stream,
  thinking: { type: 'enabled', budget_tokens: 1_024 },
  system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }],
  messages: [
    { role: 'user', content: 'first question' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'earlier thought', signature: 'EarlierSig==' },
        { type: 'text', text: 'earlier answer' },
      ],
    },
    {
      role: 'user',
      content: [{ type: 'text', text: 'count words please', cache_control: { type: 'ephemeral' } }],
    },
  ],
})

const post = (g: TestGateway, key: string, stream: boolean) =>
  fetch(`${g.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body(stream)),
  })

const words = (s: string) => (s.match(/\bw\b/g) ?? []).length

/** The upstream got the client's request as it came (passed through, not translated). */
function passedThrough(u: MeteredUpstream, stream: boolean): void {
  const sent = u.bodies[0]!
  expect(sent.stream).toBe(true) // a JSON request under a limit is streamed upstream
  const { stream: _s, ...rest } = sent
  const { stream: _c, ...asked } = body(stream)
  expect(rest).toEqual({ ...asked, model: 'claude' })
}

/** The upstream's bill once it has stopped generating (a cancelled stream stops within a delta). */
async function settledBill(u: MeteredUpstream): Promise<{ input: number; output: number }> {
  let last = -1
  for (let i = 0; i < 100; i++) {
    const b = u.bills[0]!
    if (b.output === last) return b
    last = b.output
    await Bun.sleep(50)
  }
  return u.bills[0]!
}

async function streamed(backend: Backend): Promise<void> {
  const { gw: g, up: u, key } = await start(backend)
  const res = await post(g, key, true)
  expect(res.status).toBe(200)
  const events = (await res.text())
    .split('\n\n')
    .filter((f) => f.includes('data: '))
    .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as Record<string, any>)
  const types = events.map((e) => e.type)
  // Ended as Anthropic ends an answer at max_tokens: the open block stopped, then the stop reason.
  expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop'])
  const delta = events.at(-2)!
  expect(delta.delta.stop_reason).toBe('max_tokens')
  expect(delta.usage.output_tokens).toBeGreaterThan(0)
  expect(delta.usage.output_tokens).toBeLessThanOrEqual(CAP + 64)
  // The thinking block went through as the upstream sent it, its signature intact.
  const sig = events.find((e) => e.delta?.type === 'signature_delta')
  expect(sig?.delta.signature).toBe(THINKING_SIGNATURE)
  const text = events
    .filter((e) => e.delta?.type === 'text_delta')
    .map((e) => e.delta.text as string)
    .join('')
  expect(words(text)).toBeGreaterThan(CAP / 2)
  expect(words(text)).toBeLessThanOrEqual(CAP)
  passedThrough(u, true)
  // The upstream was let go: it billed the cap and the deltas in flight, not its 3,000 tokens.
  const bill = await settledBill(u)
  expect(bill.output).toBeLessThan(CAP * 2)
  expect(bill.input + bill.output).toBeLessThanOrEqual(TPM)
}

for (const backend of backends('output-cut-passthrough.test.ts')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test('a streamed pass-through with thinking and cache_control ends at the allowance as max_tokens', () =>
      streamed(backend))

    test.skipIf(backend.name !== 'sqlite')(
      'a JSON pass-through is streamed upstream, cut at the allowance and assembled',
      async () => {
        const { gw: g, up: u, key } = await start(backend)
        const res = await post(g, key, false)
        expect(res.status).toBe(200)
        const msg = (await res.json()) as Record<string, any>
        expect(msg.type).toBe('message')
        expect(msg.model).toBe('ant/claude')
        expect(msg.stop_reason).toBe('max_tokens')
        expect(msg.content[0]).toEqual({
          type: 'thinking',
          thinking: 'w '.repeat(10),
          signature: THINKING_SIGNATURE,
        })
        expect(msg.content[1].type).toBe('text')
        expect(words(msg.content[1].text)).toBeGreaterThan(CAP / 2)
        expect(words(msg.content[1].text)).toBeLessThanOrEqual(CAP)
        expect(msg.usage.output_tokens).toBeLessThanOrEqual(CAP + 64)
        passedThrough(u, false)
        const bill = await settledBill(u)
        expect(bill.output).toBeLessThan(CAP * 2)
        expect(bill.input + bill.output).toBeLessThanOrEqual(TPM)
      },
    )

    test.skipIf(backend.name !== 'sqlite')(
      'a cap the limits clamp below the thinking budget: the budget is fitted under it, as Anthropic requires',
      async () => {
        const { gw: g, up: u, key } = await start(backend)
        // 8,000 asked with a 4,000 budget; TPM 2,000 leaves under 2,000, which the budget must stay below.
        const res = await fetch(`${g.url}/v1/messages`, {
          method: 'POST',
          headers: {
            'x-api-key': key,
            'content-type': 'application/json',
            'anthropic-version': '2023-06-01',
          },
          body: JSON.stringify({
            ...body(true),
            max_tokens: 8_000,
            thinking: { type: 'enabled', budget_tokens: 4_000 },
          }),
        })
        expect(res.status).toBe(200)
        await res.text()
        const sent = u.bodies[0]!
        expect(sent.max_tokens).toBeLessThan(TPM)
        expect(sent.thinking.budget_tokens).toBeGreaterThanOrEqual(1_024)
        expect(sent.thinking.budget_tokens).toBeLessThan(sent.max_tokens)
      },
    )
  })
}
