/**
 * An upstream that ignores the cap is cut at the allowance (DESIGN §11, issue 41), on every
 * backend and surface, streamed or not: five `max_tokens: 100` requests to an upstream that
 * answers 3,000 tokens whatever it is asked never spend past a $5 budget; a stream ends at the
 * allowance as the limit ends it (`finish_reason: "length"`, Messages `max_tokens`, Responses
 * `incomplete`) with the upstream let go, and the account is charged what was generated.
 */
import { describe, expect, test } from 'bun:test'
import type { LimitRow } from '../../../src/limits/rows.ts'
import { backends } from '../../support/backends.ts'
import { afterEach } from '../../support/hooks.ts'
import { SURFACES, startTokensBed, type TokensBed, tokensRequest } from '../../support/tokens-bed.ts'

let bed: TokensBed | undefined
afterEach(async () => {
  await bed?.stop()
  bed = undefined
})

/** 3,000 tokens answered to any cap, 10 a chunk, paced so that a cut stops the generation. */
const IGNORES_CAP = { answerTokens: 3_000, upstream: { ignoreCap: true, chunkDelayMs: 2 } }

async function used(accountName: string, row: LimitRow): Promise<number> {
  await bed!.gw.deps.recorder.flush()
  const store = bed!.gw.deps.store
  const account = (await store.getAccount(accountName))!
  const [s] = await store.rowStates({ accountId: account.id, keyId: null, now: Date.now(), rows: [row] })
  return s!.used
}

/** The words ("w") of generated text in a JSON body, or in an event stream's deltas (Responses repeats the text in its `done` events). */
const words = (text: string) =>
  text.startsWith('{')
    ? (text.match(/\bw\b/g) ?? []).length
    : text
        .split('\n')
        .filter((l) => l.includes('delta'))
        .reduce((n, l) => n + (l.match(/\bw\b/g) ?? []).length, 0)

for (const backend of backends('output-cut.test.ts')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test('five max_tokens: 100 requests to an upstream answering 3,000: billed within the $5 budget', async () => {
      // $2,000 per 1M output tokens: 3,000 tokens are $6, the cap's 100 are $0.20.
      bed = await startTokensBed(
        { metered: { rpm: null, rpd: null, budget: { usd: 5, period: 'day' }, models: ['*'] } },
        { pricing: { input: 0, output: 2_000 }, backend: await backend.fresh(), ...IGNORES_CAP },
      )
      const { key } = await bed.gw.key('budget', 'metered')
      const res = await Promise.all(
        Array.from({ length: 5 }, (_, i) => tokensRequest(bed!.gw.url, key, SURFACES[i % 3]!, i >= 3, 100)),
      )
      const bodies = await Promise.all(res.map((r) => r.text()))
      expect(res.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
      for (const body of bodies) expect(words(body)).toBeLessThanOrEqual(100)
      // Each request is billed its cap and at most the chunks in flight when it was cut.
      expect(bed.upstream.billed.output).toBeLessThan(5 * 200)
      expect(bed.upstream.billed.output * 2_000).toBeLessThanOrEqual(5_000_000)
      // Charged what was generated, at most each reservation (the chunk that crossed the line and
      // those in flight when the upstream was let go are beyond it).
      const spent = await used('budget', {
        resource: 'microdollars',
        window: 'period',
        period: 'day',
        scope: 'account',
        capacity: 5_000_000,
      })
      expect(spent).toBeGreaterThanOrEqual(5 * 80 * 2_000)
      expect(spent).toBeLessThanOrEqual(5_000_000)
    })

    test('an answer without upstream usage: the window is charged what usage and the request log show', async () => {
      bed = await startTokensBed(
        { metered: { rpm: null, rpd: null, tpm: 100_000, models: ['*'] } },
        { answerTokens: 120, backend: await backend.fresh(), upstream: { usage: false } },
      )
      const { key } = await bed.gw.key('quiet', 'metered')
      const records: Array<{ promptTokens: number | null; completionTokens: number | null }> = []
      const recorder = bed.gw.deps.recorder
      const record = recorder.record.bind(recorder)
      recorder.record = (c) => {
        records.push(c)
        record(c)
      }
      for (const surface of SURFACES) {
        const r = await tokensRequest(bed.gw.url, key, surface, false, 200)
        expect(r.status).toBe(200)
        expect(words(await r.text())).toBe(120)
      }
      const charged = await used('quiet', {
        resource: 'tokens',
        window: 'minute',
        scope: 'account',
        capacity: 100_000,
      })
      const logged = records.reduce((n, c) => n + (c.promptTokens ?? 0) + (c.completionTokens ?? 0), 0)
      expect(logged).toBe(charged)
      expect(charged).toBeGreaterThanOrEqual(bed.upstream.billed.tokens)
      const u = await (
        await fetch(`${bed.gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
      ).json()
      expect((u as any).usage.today.total_tokens).toBe(charged)
    })

    test('a stream of an upstream ignoring max_tokens: 100 ends at the allowance on every surface, the upstream let go', async () => {
      bed = await startTokensBed(
        { metered: { rpm: null, rpd: null, tpm: 100_000, models: ['*'] } },
        { backend: await backend.fresh(), ...IGNORES_CAP },
      )
      const { key } = await bed.gw.key('cut', 'metered')
      const ends = {
        chat: /"finish_reason":"length"[\s\S]*data: \[DONE\]/,
        messages: /"stop_reason":"max_tokens"[\s\S]*event: message_stop/,
        responses: /"status":"incomplete"[\s\S]*"reason":"max_output_tokens"/,
      }
      for (const surface of SURFACES) {
        const r = await tokensRequest(bed.gw.url, key, surface, true, 100)
        const text = await r.text()
        expect(r.status).toBe(200)
        expect(text).toMatch(ends[surface])
        expect(words(text)).toBeLessThanOrEqual(100)
        expect(words(text)).toBeGreaterThan(0)
      }
      // Cut, not read to its end: three answers of 3,000 would be 9,000.
      expect(bed.upstream.billed.output).toBeLessThan(3 * 300)
      const charged = await used('cut', {
        resource: 'tokens',
        window: 'minute',
        scope: 'account',
        capacity: 100_000,
      })
      expect(charged).toBeGreaterThanOrEqual(bed.upstream.billed.input + 3 * 80)
    })
  })
}
