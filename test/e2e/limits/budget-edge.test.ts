/**
 * A budget period's edge under growing reservations (DESIGN §11: budget per calendar period,
 * never over-admitted). Two uncapped streams are admitted a minute before the UTC day ends on a
 * $1-a-day budget and go on after midnight: their growth is charged to the day they were admitted
 * in, so it is checked against that day's budget, not the new day's. Audit66c: checked against the
 * new (empty) day, 14,904 output tokens were relayed and $1.4904 charged to the old $1 day.
 * Against a real gateway (clock moved by hand) and an upstream that bills like the real one, on
 * every backend.
 */
import { describe, expect, test } from 'bun:test'
import { ManualClock } from '../../../src/util/clock.ts'
import { backends } from '../../support/backends.ts'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { startGateway, type TestGateway } from '../../support/gateway.ts'
import { afterEach, SUITE_TIMEOUT_MS } from '../../support/hooks.ts'
import { tokensDoc } from '../../support/tokens-bed.ts'

let gateway: TestGateway | undefined
let upstream: BillingUpstream | undefined
afterEach(async () => {
  await gateway?.stop()
  await upstream?.stop()
  gateway = upstream = undefined
})

/** A UTC midnight a day ahead: Redis expires a period's spend at its end (plus a day) on its own clock. */
const EDGE = Math.ceil((Date.now() + 1) / 86_400_000) * 86_400_000 + 86_400_000
/** $1 a day at $100 per million output tokens (input free): 10,000 output tokens a day. */
const DAY = {
  resource: 'microdollars',
  window: 'period',
  period: 'day',
  scope: 'account',
  capacity: 1_000_000,
} as const

for (const backend of backends('budget-edge.test.ts')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test(
      'two streams admitted at 23:59 and growing after midnight stay within the day they were admitted in; the new day is free of them',
      async () => {
        const clock = new ManualClock(EDGE - 60_000)
        let release!: () => void
        const gated = new Promise<void>((r) => {
          release = r
        })
        let arrived = 0
        upstream = await startBillingUpstream({
          answerTokens: 9_000,
          defaultMax: 32_000,
          chunkTokens: 50,
          chunkDelayMs: 1,
          gate: () => {
            arrived++
            return gated
          },
        })
        const metered = { rpm: null, rpd: null, budget: { usd: 1, period: 'day' }, models: ['*'] }
        const doc = tokensDoc(upstream.url, { metered }, { input: 0, output: 100 }) as any
        doc.providers[1].models[0].max_output_tokens = 32_000
        gateway = await startGateway({ doc, clock, backend: await backend.fresh() })
        const gw = gateway
        const { key } = await gw.key('acct', 'metered')
        const send = () =>
          fetch(`${gw.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              model: 'bill/m',
              messages: [{ role: 'user', content: 'hi' }],
              stream: true,
            }),
          })
        // Both admitted at 23:59, each holding a first slice; the upstream holds them at their first chunk.
        const a = send()
        while (arrived < 1) await Bun.sleep(5)
        const b = send()
        while (arrived < 2) await Bun.sleep(5)
        expect(upstream.caps).toEqual([10_000, expect.any(Number)])
        clock.set(EDGE + 1_000)
        release()
        const texts = await Promise.all([a, b].map(async (r) => (await r).text()))
        await gw.deps.recorder.flush()
        // Growing side by side, they are cut where the old day's dollar ends: whichever asks for
        // more when it is spent ends as `length` (without the edge: the same, $0.9952 relayed).
        const finishes = texts.map((t) => t.match(/"finish_reason":"(\w+)"/g)?.at(-1))
        expect(finishes).toContain('"finish_reason":"length"')
        // What was relayed (a word a token) fits the old day's 10,000 tokens. (The upstream bills a
        // little more: what it made while each cancellation reached it, fifty times a real model's pace.)
        const words = texts.map((t) => t.match(/\bw\b/g)?.length ?? 0)
        expect(words[0]! + words[1]!).toBeLessThanOrEqual(10_000)
        expect(words[0]! + words[1]!).toBeGreaterThan(9_000)
        const acct = (await gw.deps.store.getAccount('acct'))!
        const spent = async (now: number) =>
          (await gw.deps.store.rowStates({ accountId: acct.id, keyId: null, now, rows: [DAY] }))[0]!.used
        // Settled: the old day charged at most its budget, the new day nothing.
        let old = 0
        for (let i = 0; i < 100 && old < 900_000; i++) {
          await Bun.sleep(20)
          old = await spent(EDGE - 1)
        }
        expect(old).toBeGreaterThan(900_000)
        expect(old).toBeLessThanOrEqual(1_000_000)
        expect(await spent(clock.now())).toBe(0)
      },
      SUITE_TIMEOUT_MS,
    )
  })
}
