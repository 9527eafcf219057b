/**
 * A Responses request's `prompt` names a prompt template stored at OpenAI (`{"id": "pmpt_…",
 * "variables": {…}}`): its text — instructions, examples, files — is billed as input and never
 * seen by the gateway, so no reservation bounds it (DESIGN §11, as a Gemini `cachedContent`).
 * Under a token or a money limit it is refused with 400 naming `prompt` before anything reaches
 * the upstream; without one it passes through to a Responses upstream as it came. Found: a
 * `wire: responses` upstream received it under TPM and budget limits, reserved as the word "hi".
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type FaultUpstream, startFaultUpstream } from '../../../support/fault-upstream.ts'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

let up: FaultUpstream
let gw: TestGateway
beforeAll(async () => {
  up = await startFaultUpstream()
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'oar',
          kind: 'openai',
          wire: 'responses',
          base_url: `${up.url}/v1`,
          api_key: 'sk-up',
          models: [
            {
              name: 'm',
              context_window: 16_000,
              max_output_tokens: 4096,
              features: ['streaming', 'system_messages', 'tools'],
              pricing: { input: 1, output: 2 },
            },
          ],
        },
      ],
      plans: {
        ...PLANS,
        tokens: { rpm: null, rpd: null, tpm: 100_000, models: ['*'] },
        money: { rpm: null, rpd: null, budget: { usd: 5, period: 'day' }, models: ['*'] },
      },
    }),
  })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const PROMPT = { id: 'pmpt_68b2c0a1e5f8', version: '3', variables: { city: 'Paris' } }

const ask = (key: string, more: Record<string, unknown>) =>
  fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oar/m', input: 'hi', max_output_tokens: 50, ...more }),
  })

test.each(['tokens', 'money'])('under a %s limit: 400 naming prompt, nothing sent', async (plan) => {
  const { key } = await gw.key(`stored-prompt-${plan}`, plan)
  const before = up.attempts().length
  const res = await ask(key, { prompt: PROMPT })
  expect(res.status).toBe(400)
  const error = ((await res.json()) as any).error
  expect(error).toMatchObject({ code: 'unsupported_value', param: 'prompt' })
  expect(up.attempts().length).toBe(before)
  // The same request without it is served.
  const plain = await ask(key, {})
  expect(plain.status).toBe(200)
  await plain.arrayBuffer()
  // A null prompt asks for nothing.
  const none = await ask(key, { prompt: null })
  expect(none.status).toBe(200)
  await none.arrayBuffer()
})

test('without a limit it passes through as it came', async () => {
  const { key } = await gw.key('stored-prompt-open', 'unlimited')
  const res = await ask(key, { prompt: PROMPT })
  expect(res.status).toBe(200)
  await res.arrayBuffer()
  expect(up.attempts().at(-1)!.body.prompt).toEqual(PROMPT)
})
