/**
 * A client that leaves after the upstream's answer began but before its first text (a reasoning
 * model still thinking past the hold: the role chunk went out, no content yet): the upstream has
 * processed the prompt, so the reservation settles to the input as reserved (DESIGN §11: "a
 * stream the client left: what was relayed, never less"), and the request's record says the same
 * tokens and cost as the budget. It settled to nothing once "something relayed" was read from the
 * time to first token, which now counts only content.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { inputTokenBound } from '../../../src/limits/estimate-tokens.ts'
import { meteredPlan } from '../../support/config-doc.ts'
import { type FaultUpstream, startFaultUpstream } from '../../support/fault-upstream.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

let up: FaultUpstream
let gw: TestGateway
beforeAll(async () => {
  up = await startFaultUpstream({ words: 12 })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0, stream_hold_ms: 200 },
      admin: { token: ADMIN_TOKEN },
      usage: { flush_ms: 10 },
      providers: [
        {
          prefix: 'prime',
          kind: 'openai',
          base_url: `${up.url}/v1`,
          api_key: 'sk-x',
          // Guards only (no test waits on one): wide, so a loaded machine's slow first byte is no 504.
          timeouts: { first_byte_ms: 10_000, first_token_ms: 10_000, idle_ms: 10_000, total_ms: 20_000 },
          models: [
            {
              name: 'gpt-a',
              context_window: 128_000,
              max_output_tokens: 4_096,
              features: ['streaming', 'system_messages'],
              // A token in costs 1 micro-dollar.
              pricing: { input: 1, output: 10 },
            },
          ],
        },
      ],
      plans: {
        metered: meteredPlan(),
      },
      default_plan: 'metered',
    },
  })
}, 15_000)
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

test('left after the role chunk, before any text: charged the input as reserved; the record agrees', async () => {
  const { key } = await gw.key('thinking', 'metered')
  up.script({ model: 'gpt-a' }, { fault: 'slow_first_token', delayMs: 3_000 })
  const client = new AbortController()
  const body = JSON.stringify({
    model: 'prime/gpt-a',
    messages: [{ role: 'user', content: 'count '.repeat(200) }],
    stream: true,
    max_completion_tokens: 100,
  })
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    signal: client.signal,
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body,
  })
  // Past the hold the status went out with the role chunk; no word yet.
  expect(res.status).toBe(200)
  const first = await res.body!.getReader().read()
  expect(new TextDecoder().decode(first.value)).not.toContain('"content":"w')
  client.abort()
  let u: any
  for (let i = 0; i < 50; i++) {
    await Bun.sleep(50)
    await gw.deps.recorder.flush()
    u = await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()
    if (u.usage.today.requests > 0 && u.usage.current_minute.tokens > 0) break
  }
  // The input as reserved (its bound for the model, limits/estimate-tokens.ts), at 1 micro-dollar each.
  const input = (await inputTokenBound(JSON.parse(body), [{ kind: 'openai', model: 'gpt-a' }])).tokens
  expect(u.usage.current_minute.tokens).toBe(input)
  expect(Math.round(u.budget.spent_usd * 1e6)).toBe(input)
  expect(u.usage.today.prompt_tokens + u.usage.today.completion_tokens).toBe(input)
  expect(Math.round(u.usage.today.cost_usd * 1e6)).toBe(input)
}, 15_000)
