/**
 * Tokens and money end to end (DESIGN §11, issue 21's acceptance), on every backend: a burst of 40
 * concurrent requests (three surfaces, streams and JSON) against TPM 3,000 never lets the upstream
 * bill more than 3,000 tokens; after settling, usage equals the bill; filled one request at a time
 * the window is usable to within one reservation. The same for a $0.01 budget at $0.0025 a
 * request. A small TPM and a 4,096-token model maximum: served with the cap clamped and said so.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { backends } from '../../support/backends.ts'
import { afterEach } from '../../support/hooks.ts'
import { SURFACES, startTokensBed, type TokensBed, tokensRequest } from '../../support/tokens-bed.ts'

let bed: TokensBed | undefined
/** The first two tests' bed (the same plan and upstream), kept for both: stopped by their describe. */
let shared: TokensBed | undefined
afterEach(async () => {
  if (bed !== shared) await bed?.stop()
  bed = undefined
})

async function usage(key: string) {
  await bed!.gw.deps.recorder.flush()
  const r = await fetch(`${bed!.gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  return (await r.json()) as any
}

async function tokensUsed(accountName: string, now: number): Promise<number> {
  const store = bed!.gw.deps.store
  const account = (await store.getAccount(accountName))!
  const [s] = await store.rowStates({
    accountId: account.id,
    keyId: null,
    now,
    rows: [{ resource: 'tokens', window: 'minute', scope: 'account', capacity: 3_000 }],
  })
  return s!.used
}

for (const backend of backends('tokens.test.ts')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    // The burst and the one-at-a-time fill on one bed: each on an account of its own (TPM 3,000
    // is the account's row), the upstream's bill counted from the test's start. A bed each was a
    // gateway, an upstream and a database more a backend (docs/benchmarks/suite-cpu.md, stop 65).
    const metered = async () =>
      (shared ??= await startTokensBed(
        { metered: { rpm: null, rpd: null, tpm: 3_000, models: ['*'] } },
        { backend: await backend.fresh() },
      ))
    afterAll(async () => {
      await shared?.stop()
      shared = undefined
    })

    test('40 concurrent requests on TPM 3,000: the upstream never bills more; usage equals the bill', async () => {
      bed = await metered()
      const before = { ...bed.upstream.billed }
      const { key } = await bed.gw.key('burst', 'metered')
      const res = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          tokensRequest(bed!.gw.url, key, SURFACES[i % 3]!, i % 2 === 0, 200),
        ),
      )
      await Promise.all(res.map((r) => r.text()))
      const statuses = res.map((r) => r.status)
      expect(statuses.every((s) => s === 200 || s === 429)).toBe(true)
      const served = statuses.filter((s) => s === 200).length
      expect(served).toBeGreaterThan(0)
      const billed = bed.upstream.billed.tokens - before.tokens
      expect(bed.upstream.billed.requests - before.requests).toBe(served)
      expect(billed).toBeLessThanOrEqual(3_000)
      const u = await usage(key)
      expect(u.usage.today.total_tokens).toBe(billed)
      // Settled: the window holds what the upstream billed, no reservation is left in it.
      expect(await tokensUsed('burst', Date.now())).toBe(billed)
      const limited = res.find((r) => r.status === 429)!
      expect(limited.headers.get('x-ratelimit-limit-tokens')).toBe('3000')
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    })

    test('filled one request at a time, the window is usable to within one reservation', async () => {
      bed = await metered()
      const before = bed.upstream.billed.tokens
      const { key } = await bed.gw.key('serial', 'metered')
      let refused: Response | null = null
      for (let i = 0; i < 100 && !refused; i++) {
        const r = await tokensRequest(bed.gw.url, key, SURFACES[i % 3]!, i % 2 === 0, 200)
        await r.text()
        if (r.status === 429) refused = r
        else expect(r.status).toBe(200)
        await bed.gw.deps.recorder.flush()
      }
      expect(refused).not.toBeNull()
      const billed = bed.upstream.billed.tokens - before
      expect(billed).toBeLessThanOrEqual(3_000)
      // Everything before was settled to the bill; what is left is less than one reservation
      // (a request's input bound, about 250 bytes, plus its 200 output tokens).
      const left = Number(refused!.headers.get('x-ratelimit-remaining-tokens'))
      expect(left).toBe(3_000 - billed)
      expect(left).toBeLessThan(500)
      expect(await tokensUsed('serial', Date.now())).toBe(billed)
    })

    test('a $0.01 budget at $0.0025 a request: 4 served in a burst of 40, then 402 naming the period end or the holds in flight', async () => {
      // 200 output tokens at $12.50 / 1M = $0.0025; input is free.
      bed = await startTokensBed(
        { metered: { rpm: null, rpd: null, budget: { usd: 0.01, period: 'month' }, models: ['*'] } },
        { pricing: { input: 0, output: 12.5 }, answerTokens: 200, backend: await backend.fresh() },
      )
      const { key } = await bed.gw.key('budget', 'metered')
      const res = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          tokensRequest(bed!.gw.url, key, SURFACES[i % 3]!, i % 2 === 0, 200),
        ),
      )
      const bodies = await Promise.all(res.map((r) => r.text()))
      expect(res.filter((r) => r.status === 200)).toHaveLength(4)
      expect(res.filter((r) => r.status === 402)).toHaveLength(36)
      expect(bed.upstream.billed.output * 12.5).toBeLessThanOrEqual(10_000_000)
      const now = new Date()
      const periodEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString()
      res.forEach((r, i) => {
        if (r.status !== 402) return
        const body = JSON.parse(bodies[i]!)
        if (i % 3 === 1) expect(body).toMatchObject({ type: 'error', error: { type: 'billing_error' } })
        else expect(body.error).toMatchObject({ code: 'budget_exceeded', type: 'billing_error' })
        // Refused while the four served still ran, the budget is only held (DESIGN §11): a short
        // wait, to be retried; refused once they settled, it is spent until the period's end.
        if (body.error.message.includes('held by requests still in flight')) {
          expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(60)
          expect(r.headers.get('x-should-retry')).toBe('true')
        } else expect(JSON.stringify(body)).toContain(periodEnd)
      })
      // A budget's 402 is a refusal by status, not a rate limit (README: rate_limited counts 429s).
      const metrics = await (await fetch(`${bed.gw.url}/metrics`)).text()
      expect(metrics).toMatch(/switchyard_requests_total\{[^}]*status="402"[^}]*\} \d+/)
      expect(metrics).not.toMatch(/^switchyard_rate_limited_total\{[^}]*\} [1-9]/m)
      const u = await usage(key)
      expect(u.usage.today.completion_tokens).toBe(bed.upstream.billed.output)
      // Settled: the period's spend is the bill, $0.01.
      const store = bed.gw.deps.store
      const account = (await store.getAccount('budget'))!
      const [spent] = await store.rowStates({
        accountId: account.id,
        keyId: null,
        now: Date.now(),
        rows: [
          { resource: 'microdollars', window: 'period', period: 'month', scope: 'account', capacity: 10_000 },
        ],
      })
      expect(spent!.used).toBe(10_000)
    })

    test('TPM 1,000 and a 4,096-token model maximum, no max_tokens: served, the cap sent upstream clamped and announced', async () => {
      bed = await startTokensBed(
        { small: { rpm: null, rpd: null, tpm: 1_000, models: ['*'] } },
        { answerTokens: 5_000, backend: await backend.fresh() },
      )
      const { key } = await bed.gw.key('small', 'small')
      const r = await tokensRequest(bed.gw.url, key, 'chat', false, null)
      expect(r.status).toBe(200)
      await r.text()
      const cap = Number(r.headers.get('x-switchyard-max-tokens'))
      expect(cap).toBeGreaterThan(256)
      expect(cap).toBeLessThan(1_000)
      expect(r.headers.get('x-switchyard-max-tokens-reason')).toBe('account:tokens:minute')
      expect(bed.upstream.caps).toEqual([cap])
      expect(bed.upstream.billed.tokens).toBeLessThanOrEqual(1_000)
      // Responses and Messages clamp their own fields the same way.
      for (const surface of ['responses', 'messages'] as const) {
        const again = await tokensRequest(bed.gw.url, key, surface, true, null)
        await again.text()
        expect(again.status).toBe(429)
      }
    })
  })
}
