/**
 * A stream continued on a `prefill` fallback that ignores its output cap (DESIGN §10, §11): the
 * continuation is sent what is left of the reservation once the first part and its own prompt
 * (the prompt again and the relayed text as the prefill) are counted, and it is cut there, on
 * every surface — never let run to the reservation's output allowance as if the first part were
 * the whole of what was spent. The window is charged both prompts (audit66a: a TPM of 600 was
 * charged 642–660 when the continuation's 400 tokens were all relayed over its cap of ~316; cut
 * at the first part's allowance instead, 600 was charged for 687 the upstream billed).
 *
 * One real local upstream that bills (test/support/billing-upstream.ts) serves `first` (cut
 * after 100 tokens) and `next` (lists `prefill`, answers `answer` tokens whatever its cap).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Completion } from '../../../src/store/index.ts'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { recordsOf, startGateway, type TestGateway } from '../../support/gateway.ts'
import { beforeEach } from '../../support/hooks.ts'
import { prefillPairDoc } from '../../support/prefill-pair.ts'

const TPM = 600
const CUT = 100

let up: BillingUpstream
let gw: TestGateway
/** Tokens `next` answers, whatever cap it was sent. */
let answer = 400
let records: Completion[] = []

beforeAll(async () => {
  up = await startBillingUpstream({
    ignoreCap: true,
    answerFor: (m) => (m === 'next' ? answer : undefined),
    answerTokens: 1_000,
    // Generated over time, as a provider does: a cut lets it go before the end of its answer.
    chunkDelayMs: 2,
    fault: (m) => (m === 'first' ? { cut: CUT } : undefined),
  })
  gw = await startGateway({
    doc: prefillPairDoc({
      upstreamUrl: up.url,
      names: ['first', 'next'],
      maxOutput: 4_000,
      // A micro-dollar a token: the budget's figures are the tokens'.
      pricing: { first: { input: 1, output: 1 }, next: { input: 1, output: 1 } },
      plans: {
        tpm: { rpm: null, rpd: null, tpm: TPM, models: ['*'] },
        budget: { rpm: null, rpd: null, budget: { usd: TPM / 1e6, period: 'day' }, models: ['*'] },
      },
      defaultPlan: 'tpm',
    }),
  })
  records = recordsOf(gw)
}, 15_000)
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})
beforeEach(() => {
  up.caps.length = 0
  up.seen.length = 0
  up.bills.length = 0
})

type Surface = 'chat' | 'messages' | 'responses' | 'gemini'
const SURFACES: Surface[] = ['chat', 'messages', 'responses', 'gemini']
const PROMPT = 'story please'

function request(surface: Surface): [string, Record<string, unknown>] {
  const messages = [{ role: 'user', content: PROMPT }]
  switch (surface) {
    case 'chat':
      return [
        '/v1/chat/completions',
        { model: 'oai/first', stream: true, stream_options: { include_usage: true }, messages },
      ]
    case 'messages':
      return ['/v1/messages', { model: 'oai/first', stream: true, max_tokens: 4_000, messages }]
    case 'responses':
      return ['/v1/responses', { model: 'oai/first', stream: true, input: PROMPT }]
    case 'gemini':
      return [
        '/v1beta/models/oai/first:streamGenerateContent?alt=sse',
        { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] },
      ]
  }
}

/** The SSE events' JSON payloads. */
function events(text: string): any[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)))
}

/** The answer's text as the client read it, and whether it ended as cut at its output limit. */
function read(surface: Surface, text: string): { words: number; length: boolean } {
  let answer = ''
  let length = false
  for (const e of events(text)) {
    if (surface === 'chat') {
      answer += e.choices?.[0]?.delta?.content ?? ''
      if (e.choices?.[0]?.finish_reason === 'length') length = true
    } else if (surface === 'messages') {
      if (e.type === 'content_block_delta') answer += e.delta?.text ?? ''
      if (e.type === 'message_delta' && e.delta?.stop_reason === 'max_tokens') length = true
    } else if (surface === 'responses') {
      if (e.type === 'response.output_text.delta') answer += e.delta
      if (e.type === 'response.incomplete' && e.response?.incomplete_details?.reason === 'max_output_tokens')
        length = true
    } else {
      const c = e.candidates?.[0]
      for (const p of c?.content?.parts ?? []) answer += p.text ?? ''
      if (c?.finishReason === 'MAX_TOKENS') length = true
    }
  }
  return { words: answer.split(/\s+/).filter(Boolean).length, length }
}

let accounts = 0

/** A stream of `oai/first` on `surface` on a fresh account of `plan`, read to its end, and what it was charged. */
async function continued(surface: Surface, plan = 'tpm') {
  const account = `over-${surface}-${++accounts}`
  const { key } = await gw.key(account, plan)
  const [path, body] = request(surface)
  const before = records.length
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'x-goog-api-key': key,
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  expect(res.status).toBe(200)
  for (let i = 0; i < 400 && records.length === before; i++) await Bun.sleep(10)
  const row = records.at(-1)!
  expect(row.answeredBy).toBe('oai/next')
  // The settlement in the store before the window is read.
  await gw.deps.recorder.flush()
  const usage = (await (
    await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as any
  expect(up.seen.map((s) => s.model)).toEqual(['first', 'next'])
  // What the upstream billed for both prompts (the continuation's carries the first part's text).
  const billedInput = up.bills.reduce((n, b) => n + b.input, 0)
  return { text, row, usage, cap: up.caps[1]!, billedInput, ...read(surface, text) }
}

/**
 * The continuation answers past its cap of ~316 (`answer`): under what the first part alone was
 * allowed (400: relayed whole before), or past that too (1,000: cut there before, and by then
 * far enough past the cut for the upstream to be seen let go).
 */
const CASES = [
  { answer: 400, title: 'a 400-token continuation over its cap ends as cut', letGo: false },
  {
    answer: 1_000,
    title: "a 1,000-token one is cut at its cap, not the first part's allowance",
    letGo: true,
  },
]

describe('a continuation that ignores its cap is cut at it; the window is charged both prompts', () => {
  for (const surface of SURFACES)
    for (const c of CASES)
      test(`${surface}: ${c.title}, within TPM ${TPM}`, async () => {
        answer = c.answer
        const r = await continued(surface)
        expect(r.cap).toBeGreaterThan(0)
        expect(r.cap).toBeLessThan(400)
        // Nothing past the continuation's cap reached the client, and it reads a cut answer.
        expect(r.words).toBeLessThanOrEqual(CUT + r.cap)
        expect(r.length).toBe(true)
        const charged = r.usage.usage.current_minute.tokens
        expect(charged).toBeLessThanOrEqual(TPM)
        // Never below what the upstream billed for what reached the client: both prompts and the text.
        expect(charged).toBeGreaterThanOrEqual(r.billedInput + r.words)
        expect(r.row.promptTokens!).toBeGreaterThanOrEqual(r.billedInput)
        // Let go at the cut, not read to its end.
        if (c.letGo) expect(up.bills.at(-1)!.output).toBeLessThan(c.answer)
      })

  test('chat on a budget: the continuation is cut within it, and the client reads what was charged', async () => {
    answer = 400
    const r = await continued('chat', 'budget')
    expect(r.words).toBeLessThanOrEqual(CUT + r.cap)
    expect(r.length).toBe(true)
    expect(r.usage.budget.spent_usd).toBeLessThanOrEqual(TPM / 1e6)
    expect(r.row.costMicros!).toBeGreaterThanOrEqual(r.billedInput + r.words)
    const u = events(r.text).findLast((e) => e.usage)?.usage
    expect({ prompt_tokens: u?.prompt_tokens, completion_tokens: u?.completion_tokens }).toEqual({
      prompt_tokens: r.row.promptTokens,
      completion_tokens: r.row.completionTokens,
    })
  })
})
