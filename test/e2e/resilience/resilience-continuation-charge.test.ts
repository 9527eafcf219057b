/**
 * A stream continued on a `prefill` fallback (DESIGN §10), charged as DESIGN §11 says: nothing
 * over-admitted (the upstream's bill stays within the request's tokens-per-minute and budget) and
 * nothing recorded below what the upstreams billed, each part at its own model's prices.
 *
 * One real local upstream that bills (test/support/billing-upstream.ts) serves both models: `dear`
 * (the primary, dear prices) and `pf` (its fallback listing `prefill`, cheap prices). A fault cuts
 * `dear`'s stream after some tokens, or makes `pf` refuse the continuation.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { outputTokenCount } from '../../../src/limits/output-count.ts'
import type { Completion } from '../../../src/store/index.ts'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { recordsOf, startGateway, type TestGateway } from '../../support/gateway.ts'
import { beforeEach } from '../../support/hooks.ts'
import { prefillPairDoc } from '../../support/prefill-pair.ts'

// USD per 1M tokens: a token costs that many micro-dollars.
const PRICES: Record<string, { input: number; output: number }> = {
  dear: { input: 10, output: 30 },
  pf: { input: 1, output: 2 },
}

let up: BillingUpstream
let gw: TestGateway
let records: Completion[] = []
let faults: Record<string, { cut?: number; refuse?: boolean }> = {}

beforeAll(async () => {
  up = await startBillingUpstream({ answerTokens: 1_000, defaultMax: 1_000, fault: (m) => faults[m] })
  const plan = (tpm: number | null) => ({
    rpm: null,
    rpd: null,
    tpm,
    budget: { usd: 100, period: 'month' },
    models: ['*'],
  })
  gw = await startGateway({
    doc: prefillPairDoc({
      upstreamUrl: up.url,
      names: ['dear', 'pf'],
      maxOutput: 1_000,
      pricing: PRICES,
      retry: { attempts: 1, backoff_ms: 10, max_backoff_ms: 20, max_retry_after_s: 1 },
      plans: {
        t400: plan(400),
        t500: plan(500),
        wide: plan(1_000_000),
        free: { rpm: null, rpd: null, models: ['*'] },
      },
      defaultPlan: 'wide',
    }),
  })
  records = recordsOf(gw)
}, 15_000)
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})
beforeEach(() => {
  faults = {}
  up.caps.length = 0
  up.seen.length = 0
  for (const k of Object.keys(up.byModel)) delete up.byModel[k]
  up.billed.tokens = up.billed.input = up.billed.output = up.billed.requests = 0
})

let accounts = 0

/** A stream of oai/dear on a fresh account of `plan`, read to its end; its record once written. */
async function stream(plan: string, extra: Record<string, unknown> = {}) {
  const { key } = await gw.key(`cont-${++accounts}`, plan)
  const before = records.length
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'oai/dear',
      messages: [{ role: 'user', content: 'count for me please' }],
      stream: true,
      stream_options: { include_usage: true },
      ...extra,
    }),
  })
  const text = await res.text()
  for (let i = 0; i < 100 && records.length === before; i++) await Bun.sleep(10)
  const row = records.at(-1)!
  return { res, text, row }
}

/** What the upstream billed, in micro-dollars, at each model's prices. */
function billedMicros(): number {
  let m = 0
  for (const [name, b] of Object.entries(up.byModel))
    m += b.input * PRICES[name]!.input + b.output * PRICES[name]!.output
  return m
}

/** The final usage chunk of a chat stream, as the client reads it. */
function clientUsage(text: string) {
  const chunks = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice(6)))
  const u = chunks.findLast((c) => c.usage)?.usage
  return u && { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens }
}

const recordedTokens = (row: Completion) => (row.promptTokens ?? 0) + (row.completionTokens ?? 0)

describe('a stream that may be continued is capped and charged within its reservation', () => {
  test('a passed-through stream with a prefill fallback sends the output allowance upstream', async () => {
    const { res, row } = await stream('t400')
    const cap = Number(res.headers.get('x-switchyard-max-tokens'))
    expect(cap).toBeGreaterThan(0)
    expect(up.caps).toEqual([cap])
    expect(up.billed.tokens).toBeLessThanOrEqual(400)
    expect(recordedTokens(row)).toBeGreaterThanOrEqual(up.billed.tokens)
  })

  test('a continuation is capped to what is left of the reservation; the bill stays within tpm', async () => {
    faults = { dear: { cut: 20 } }
    const { res, text, row } = await stream('t500', { max_tokens: 1_000 })
    const allowance = Number(res.headers.get('x-switchyard-max-tokens'))
    expect(up.seen.map((s) => s.model)).toEqual(['dear', 'pf'])
    // The relayed part in tokens, as its (openai) provider counts them (DESIGN §11), not bytes.
    const relayed = outputTokenCount(up.seen[1]!.prefill!, 'o200k')
    expect(up.caps[0]).toBe(allowance)
    expect(up.caps[1]).toBeGreaterThan(0)
    expect(up.caps[1]!).toBeLessThanOrEqual(allowance - relayed)
    expect(text).toContain('[DONE]')
    expect(up.billed.tokens).toBeLessThanOrEqual(500)
    expect(recordedTokens(row)).toBeGreaterThanOrEqual(up.billed.tokens)
    expect(row.costMicros!).toBeGreaterThanOrEqual(billedMicros())
    // The client reads the usage the request was charged: both parts', the first as it was counted.
    expect(clientUsage(text)).toEqual({
      prompt_tokens: row.promptTokens,
      completion_tokens: row.completionTokens,
    })
  })

  test('a continuation that would not fit is not made: the stream ends with the error in-band', async () => {
    // Cut late enough that the first part's prompt and text, counted twice (the continuation
    // resends both as its prompt), leave nothing of TPM 500 (the input bound is ~20 tokens here).
    faults = { dear: { cut: 240 } }
    const { text, row } = await stream('t500', { max_tokens: 1_000 })
    expect(up.seen.map((s) => s.model)).toEqual(['dear'])
    expect(text).toContain('upstream_stream_interrupted')
    expect(row.answeredBy).toBeNull()
    expect(up.billed.tokens).toBeLessThanOrEqual(500)
    expect(recordedTokens(row)).toBeGreaterThanOrEqual(up.billed.tokens)
    expect(row.costMicros!).toBeGreaterThanOrEqual(billedMicros())
  })

  test('without limits the continuation asks for the client max_tokens less the tokens relayed', async () => {
    faults = { dear: { cut: 30 } }
    await stream('free', { max_tokens: 100 })
    expect(up.seen.map((s) => s.model)).toEqual(['dear', 'pf'])
    const relayed = outputTokenCount(up.seen[1]!.prefill!, 'o200k')
    expect(up.caps).toEqual([100, 100 - relayed])
  })
})

describe('a continued stream is priced part by part', () => {
  test('the first part at the first model, the continuation at the fallback: never below the bill', async () => {
    // Most of the answer is the dear model's: priced at the cheap one's it would fall below the bill.
    faults = { dear: { cut: 200 } }
    const { row } = await stream('wide', { max_tokens: 1_000 })
    expect(up.seen.map((s) => s.model)).toEqual(['dear', 'pf'])
    expect(row.answeredBy).toBe('oai/pf')
    expect(recordedTokens(row)).toBeGreaterThanOrEqual(up.billed.tokens)
    expect(row.costMicros!).toBeGreaterThanOrEqual(billedMicros())
  })

  test('a refused continuation leaves the first model the answerer, at its prices', async () => {
    faults = { dear: { cut: 20 }, pf: { refuse: true } }
    const { text, row } = await stream('wide', { max_tokens: 1_000 })
    expect(up.seen.map((s) => s.model)).toEqual(['dear', 'pf'])
    expect(text).toContain('upstream_stream_interrupted')
    expect(row.answeredBy).toBeNull()
    expect(row.attempts).toBe(1)
    expect(recordedTokens(row)).toBeGreaterThanOrEqual(up.billed.tokens)
    expect(row.costMicros!).toBeGreaterThanOrEqual(billedMicros())
  })
})
