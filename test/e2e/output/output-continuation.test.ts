/**
 * A rescued stream's continuation (DESIGN §10) counts the relayed part in tokens, not bytes
 * (DESIGN §11, issue 41): `max_tokens: 250` and an answer cut after 81 six-byte words (486 bytes,
 * 81 tokens) is continued with what is left of the 250 tokens, on chat and Messages alike.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { outputTokenCount } from '../../../src/limits/output-count.ts'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../../support/gateway.ts'
import { beforeEach } from '../../support/hooks.ts'
import { prefillPairDoc } from '../../support/prefill-pair.ts'

let up: BillingUpstream
let gw: TestGateway
let key: string

beforeAll(async () => {
  up = await startBillingUpstream({
    answerTokens: 1_000,
    word: 'hello',
    fault: (m) => (m === 'first' ? { cut: 81 } : undefined),
  })
  gw = await startGateway({
    doc: prefillPairDoc({
      upstreamUrl: up.url,
      names: ['first', 'next'],
      maxOutput: 1_000,
      plans: { free: { rpm: null, rpd: null, models: ['*'] } },
      defaultPlan: 'free',
    }),
  })
  key = (await gw.key('cont', 'free')).key
}, 15_000)
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})
beforeEach(() => {
  up.caps.length = 0
  up.seen.length = 0
})

const BODIES = {
  chat: ['/v1/chat/completions', { stream_options: { include_usage: true } }],
  messages: ['/v1/messages', {}],
} as const

describe('a continuation after 81 tokens (486 bytes) of max_tokens: 250', () => {
  for (const [surface, [path, extra]] of Object.entries(BODIES)) {
    test(`${surface}: continued with the 250 tokens less the 81 relayed`, async () => {
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'oai/first',
          messages: [{ role: 'user', content: 'say hello' }],
          stream: true,
          max_tokens: 250,
          ...extra,
        }),
      })
      const text = await res.text()
      expect(res.status).toBe(200)
      expect(up.seen.map((s) => s.model)).toEqual(['first', 'next'])
      const prefill = up.seen[1]!.prefill!
      expect(Buffer.byteLength(prefill)).toBeGreaterThan(250)
      const relayed = outputTokenCount(prefill, 'o200k')
      expect(relayed).toBeLessThan(100)
      expect(up.caps).toEqual([250, 250 - relayed])
      expect(text).not.toContain('upstream_stream_interrupted')
      expect(text).toMatch(surface === 'chat' ? /data: \[DONE\]/ : /event: message_stop/)
    })
  }
})

test('a continued stream is flagged estimated: its first part was counted by the gateway (the request log, /v1/usage)', async () => {
  // The continuation reports its usage, the first part added to it: still, that first part's
  // tokens are the gateway's count of what it relayed, not the upstream's (DESIGN §11).
  const own = (await gw.key('cont-estimated', 'free')).key
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${own}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'oai/first',
      messages: [{ role: 'user', content: 'say hello' }],
      stream: true,
      max_tokens: 250,
      stream_options: { include_usage: true },
    }),
  })
  expect(res.status).toBe(200)
  await res.text()
  expect(up.seen.map((s) => s.model)).toEqual(['first', 'next'])
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  let row: any = null
  for (let i = 0; i < 400 && !(row?.status !== null && row?.status !== undefined); i++) {
    await gw.deps.recorder.flush()
    row = (
      (await (
        await fetch(`${gw.url}/admin/v1/requests?account=cont-estimated`, { headers: admin })
      ).json()) as any
    ).data?.[0]
    if (row?.status == null) await Bun.sleep(25)
  }
  expect(row).toMatchObject({ status: 200, answered_by: 'oai/next', estimated: true })
  expect(row.completion_tokens).toBeGreaterThan(0)
  const usage = (await (
    await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${own}` } })
  ).json()) as any
  expect(usage.usage.today.estimated_requests).toBe(1)
})
