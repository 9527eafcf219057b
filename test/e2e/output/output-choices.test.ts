/**
 * `n` multiplies every output reservation, clamp and settlement (DESIGN §11, issue 41), on every
 * backend, against an upstream that bills completion tokens per choice: one `n: 128` request on
 * TPM 10,000 is served with the per-choice cap shared out of what fits, and the upstream never
 * bills past the limit; twenty concurrent `n: 8` requests never spend past a $5 budget; a stream
 * of eight choices without upstream usage settles to what was relayed across all of them.
 */
import { describe, expect, test } from 'bun:test'
import type { LimitRow } from '../../../src/limits/rows.ts'
import { backends } from '../../support/backends.ts'
import { afterEach } from '../../support/hooks.ts'
import { startTokensBed, type TokensBed } from '../../support/tokens-bed.ts'

let bed: TokensBed | undefined
afterEach(async () => {
  await bed?.stop()
  bed = undefined
})

const TEXT = 'please count these words for the billing upstream which bills one token for each word it sees'

function chat(key: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${bed!.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bill/m', messages: [{ role: 'user', content: TEXT }], ...body }),
  })
}

async function used(accountName: string, row: LimitRow): Promise<number> {
  await bed!.gw.deps.recorder.flush()
  const store = bed!.gw.deps.store
  const account = (await store.getAccount(accountName))!
  const [s] = await store.rowStates({ accountId: account.id, keyId: null, now: Date.now(), rows: [row] })
  return s!.used
}

const minute = (capacity: number): LimitRow => ({
  resource: 'tokens',
  window: 'minute',
  scope: 'account',
  capacity,
})

for (const backend of backends('output-choices.test.ts')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test('n: 128, max_tokens: 2000 on TPM 10,000: each choice capped at its share, the upstream bills within the limit', async () => {
      bed = await startTokensBed(
        { metered: { rpm: null, rpd: null, tpm: 10_000, models: ['*'] } },
        { answerTokens: 2_000, backend: await backend.fresh() },
      )
      const { key } = await bed.gw.key('choices', 'metered')
      const r = await chat(key, { n: 128, max_tokens: 2_000 })
      const body = (await r.json()) as any
      expect(r.status).toBe(200)
      expect(body.choices).toHaveLength(128)
      const cap = Number(r.headers.get('x-switchyard-max-tokens'))
      expect(bed.upstream.caps).toEqual([cap])
      expect(cap * 128).toBeLessThanOrEqual(10_000)
      expect(cap * 128).toBeGreaterThan(9_000)
      expect(bed.upstream.billed.tokens).toBeLessThanOrEqual(10_000)
      // Not cut (the upstream honoured the cap): settled to its usage.
      expect(await used('choices', minute(10_000))).toBe(bed.upstream.billed.tokens)
    })

    test('twenty concurrent n: 8 requests on a $5 day budget: the upstream bills at most $5', async () => {
      // $1,000 per 1M output tokens: one choice of 1,000 tokens is $1, a request of eight $8.
      bed = await startTokensBed(
        { metered: { rpm: null, rpd: null, budget: { usd: 5, period: 'day' }, models: ['*'] } },
        { pricing: { input: 0, output: 1_000 }, answerTokens: 1_000, backend: await backend.fresh() },
      )
      const { key } = await bed.gw.key('budget', 'metered')
      const res = await Promise.all(
        Array.from({ length: 20 }, (_, i) => chat(key, { n: 8, max_tokens: 1_000, stream: i % 2 === 0 })),
      )
      await Promise.all(res.map((r) => r.text()))
      expect(res.every((r) => r.status === 200 || r.status === 402)).toBe(true)
      expect(res.some((r) => r.status === 200)).toBe(true)
      // Micro-dollars: output tokens × $1,000 / 1M.
      expect(bed.upstream.billed.output * 1_000).toBeLessThanOrEqual(5_000_000)
    })

    test('a stream of eight choices without upstream usage settles to what all of them relayed', async () => {
      bed = await startTokensBed(
        { metered: { rpm: null, rpd: null, tpm: 100_000, models: ['*'] } },
        { answerTokens: 100, backend: await backend.fresh(), upstream: { usage: false } },
      )
      const { key } = await bed.gw.key('quiet', 'metered')
      const r = await chat(key, {
        n: 8,
        max_tokens: 100,
        stream: true,
        stream_options: { include_usage: true },
      })
      expect(r.status).toBe(200)
      const text = await r.text()
      expect(text).toContain('"index":7')
      expect(bed.upstream.billed.output).toBe(800)
      expect(await used('quiet', minute(100_000))).toBeGreaterThanOrEqual(bed.upstream.billed.tokens)
    })
  })
}
