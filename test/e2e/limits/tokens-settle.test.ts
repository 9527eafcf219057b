/**
 * Settling a stream the upstream's usage does not cover (DESIGN §11: "a stream the client left:
 * what was relayed, never less"; issue 21: "a failed request: nothing, or what was relayed"), on
 * every route a stream takes: chat to an OpenAI chat upstream, Messages and Responses translated
 * to it, Messages to an Anthropic one, Responses to an OpenAI Responses one, and chat translated
 * to Anthropic (under a token or money limit every route is translated, so that the answer is
 * counted as it arrives: pipeline/output-cut.ts).
 *
 * Each request reserves its input bound (limits/estimate-tokens.ts, for the route's provider) plus
 * 2,000 output tokens. A client that leaves after 3 text deltas, and an upstream that cuts the
 * stream after 3 deltas with no usage, settle to the input as reserved plus the text relayed in
 * tokens, as counted on arrival (limits/output-count.ts — an upper bound):
 * at least what the client got, far below the reservation; the budget to the model's price of
 * those tokens. A stream cut before any text settles to nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { inputTokenBound } from '../../../src/limits/estimate-tokens.ts'
import { outputTokenCount } from '../../../src/limits/output-count.ts'
import type { Completion } from '../../../src/store/index.ts'
import { waitFor } from '../../support/chat-bed.ts'
import { meteredPlan } from '../../support/config-doc.ts'
import { ADMIN_TOKEN, recordsOf, startGateway, type TestGateway } from '../../support/gateway.ts'
import {
  CUT_AFTER,
  DELTA_TEXT,
  type MeteredUpstream,
  startMeteredUpstream,
} from '../../support/metered-upstream.ts'

const ALLOWANCE = 2_000
// USD per 1M tokens: a token in costs 1 micro-dollar, a token out 10.
const PRICING = { input: 1, output: 10 }
const PROMPT = 'please count these words for the metered upstream which bills one token for each word it sees'

let up: MeteredUpstream
let gw: TestGateway
let records: Completion[] = []

beforeAll(async () => {
  up = await startMeteredUpstream({ answerTokens: ALLOWANCE, delayMs: 15, cutOnRelease: true })
  const models = ['slow', 'cut', 'early'].map((name) => ({
    name,
    context_window: 128_000,
    max_output_tokens: 4_096,
    features: ['streaming', 'system_messages'],
    pricing: PRICING,
  }))
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        { prefix: 'oai', kind: 'openai', base_url: `${up.url}/v1`, api_key: 'sk-up', models },
        { prefix: 'ant', kind: 'anthropic', base_url: up.url, api_key: 'sk-ant-up', models },
        {
          prefix: 'resp',
          kind: 'openai',
          wire: 'responses',
          base_url: `${up.url}/v1`,
          api_key: 'sk-up',
          models,
        },
      ],
      plans: {
        metered: meteredPlan(),
      },
      default_plan: 'metered',
    },
  })
  records = recordsOf(gw)
}, 15_000)
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

type Surface = 'chat' | 'messages' | 'responses'
/** [surface, provider prefix, the route's name]. */
const ROUTES: Array<[Surface, string, string]> = [
  ['chat', 'oai', 'chat to OpenAI chat'],
  ['messages', 'oai', 'Messages translated to OpenAI chat'],
  ['responses', 'oai', 'Responses translated to OpenAI chat'],
  ['messages', 'ant', 'Messages to Anthropic'],
  ['responses', 'resp', 'Responses to OpenAI Responses'],
  ['chat', 'ant', 'chat translated to Anthropic'],
]

function body(surface: Surface, model: string): Record<string, unknown> {
  if (surface === 'chat')
    return {
      model,
      messages: [{ role: 'user', content: PROMPT }],
      stream: true,
      max_completion_tokens: ALLOWANCE,
    }
  if (surface === 'messages')
    return { model, messages: [{ role: 'user', content: PROMPT }], stream: true, max_tokens: ALLOWANCE }
  return { model, input: PROMPT, stream: true, max_output_tokens: ALLOWANCE }
}

const PATHS: Record<Surface, string> = {
  chat: '/v1/chat/completions',
  messages: '/v1/messages',
  responses: '/v1/responses',
}

/** The generated text of one event, per surface. */
function textOf(surface: Surface, e: any): string | undefined {
  if (surface === 'chat') return e.choices?.[0]?.delta?.content || undefined
  if (surface === 'messages') return e.type === 'content_block_delta' ? e.delta?.text : undefined
  return e.type === 'response.output_text.delta' ? e.delta : undefined
}

let accounts = 0

/** The relayed text's tokens as the gateway counts them for the route's provider (DESIGN §11). */
const counted = (prefix: string, text: string) =>
  outputTokenCount(text, prefix === 'ant' ? 'claude' : 'o200k')

/** Sends the request on a fresh account; its input bound is the reservation's input side. */
async function send(surface: Surface, model: string) {
  const { key } = await gw.key(`settle-${++accounts}`, 'metered')
  const sent = body(surface, model)
  const text = JSON.stringify(sent)
  const kind = model.startsWith('ant/') ? 'anthropic' : 'openai'
  const input = (await inputTokenBound(sent, [{ kind, model: model.slice(model.indexOf('/') + 1) }])).tokens
  const res = await fetch(`${gw.url}${PATHS[surface]}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: text,
  })
  // This request's own record, by its id: a record counted by position could be an earlier test's
  // arriving late (one that failed before it waited for its own).
  const id = res.headers.get('x-request-id')!
  return { key, res, input, settled: () => settledOf(key, id) }
}

/**
 * Reads `res` until `n` text deltas came (all of it when n is Infinity): the text, and whether it
 * ended. `onDeltas` runs once when `CUT_AFTER` deltas have come.
 */
async function read(
  surface: Surface,
  res: Response,
  n: number,
  onDeltas?: () => void,
): Promise<{ text: string; deltas: number }> {
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let buf = ''
  let text = ''
  let deltas = 0
  while (deltas < n) {
    let chunk: Awaited<ReturnType<typeof reader.read>>
    try {
      chunk = await reader.read()
    } catch {
      break
    }
    if (chunk.done) break
    buf += dec.decode(chunk.value, { stream: true })
    for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
      const frame = buf.slice(0, i)
      buf = buf.slice(i + 2)
      const data = frame.split('\n').find((l) => l.startsWith('data: {'))
      const t = data ? textOf(surface, JSON.parse(data.slice(6))) : undefined
      // Several frames can come in one read (a loaded machine delays the reader): the client
      // takes n deltas and leaves, whatever else the gateway has already relayed.
      if (t && deltas < n) {
        text += t
        if (++deltas === CUT_AFTER) onDeltas?.()
      }
    }
  }
  await reader.cancel().catch(() => {})
  return { text, deltas }
}

/**
 * Once the request's record is written: the tokens and micro-dollars its reservation settled to,
 * and (`logged`) what its usage record says — the same, so the usage report and the request log
 * agree with the budget.
 */
async function settledOf(
  key: string,
  requestId: string,
): Promise<{ tokens: number; micros: number; logged: { tokens: number; micros: number } }> {
  await waitFor(() => records.some((r) => r.requestId === requestId), 3_000)
  await gw.deps.recorder.flush()
  const u = (await (
    await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as any
  const today = u.usage.today
  return {
    tokens: u.usage.current_minute.tokens,
    micros: Math.round(u.budget.spent_usd * 1e6),
    logged: {
      tokens: today.prompt_tokens + today.completion_tokens,
      micros: Math.round(today.cost_usd * 1e6),
    },
  }
}

describe('a stream the client left after 3 text deltas: the input as reserved + the text relayed', () => {
  for (const [surface, prefix, name] of ROUTES) {
    test(name, async () => {
      const bills = up.bills.length
      const s = await send(surface, `${prefix}/slow`)
      expect(s.res.status).toBe(200)
      expect(s.res.headers.get('x-switchyard-max-tokens')).toBeNull() // the allowance is all of 2,000
      const seen = await read(surface, s.res, 3)
      expect(seen.deltas).toBe(3)
      const { tokens, micros, logged } = await s.settled()
      expect(logged).toEqual({ tokens, micros })
      const bill = up.bills[bills]!
      const reserved = s.input + ALLOWANCE
      const seenBytes = Buffer.byteLength(seen.text)
      // Never less than what the client got (counted as its provider's kind counts it; one upstream
      // token per 2 bytes of it) and its prompt...
      expect(tokens).toBeGreaterThanOrEqual(s.input + counted(prefix, seen.text))
      expect(tokens).toBeGreaterThanOrEqual(bill.input + seenBytes / 2)
      // ... never more than what the upstream generated, as bytes, and far below the reservation.
      expect(tokens).toBeLessThanOrEqual(s.input + 2 * bill.output)
      expect(tokens).toBeLessThan(s.input + ALLOWANCE / 4)
      expect(tokens).toBeLessThan(reserved)
      // Money: the same tokens at the model's prices (1 and 10 micro-dollars a token).
      expect(micros).toBe(s.input + 10 * (tokens - s.input))
      expect(micros).toBeLessThan(s.input + 10 * ALLOWANCE)
    })
  }
})

describe('an upstream that cuts the stream after 3 deltas, no usage: the input as reserved + the text relayed', () => {
  for (const [surface, prefix, name] of ROUTES) {
    test(name, async () => {
      const s = await send(surface, `${prefix}/cut`)
      expect(s.res.status).toBe(200)
      // The upstream cuts once the client has its deltas: a reset earlier would drop the ones the
      // gateway had not read yet (under load it lost the third), and the test would see 2.
      const seen = await read(surface, s.res, Number.POSITIVE_INFINITY, () => up.releaseCut())
      expect(seen.text).toBe(DELTA_TEXT.repeat(CUT_AFTER))
      const { tokens, micros, logged } = await s.settled()
      // Counted chunk by chunk as it arrived: on the calibrated bound (Anthropic here) each of the
      // CUT_AFTER chunks is rounded up and carries the family's token a text, so the sum may pass
      // the whole text's count by up to one a chunk (limits/output-count.ts); on o200k it is equal.
      const whole = counted(prefix, seen.text)
      const relayed = tokens - s.input
      expect(relayed).toBeGreaterThanOrEqual(whole)
      expect(relayed).toBeLessThanOrEqual(whole + (prefix === 'ant' ? 2 * CUT_AFTER : 0))
      expect(micros).toBe(s.input + 10 * relayed)
      // The usage record says what was charged (it said nothing: no tokens, no cost).
      expect(logged).toEqual({ tokens, micros })
    })
  }
})

describe('an upstream that cuts the stream before any text: nothing', () => {
  for (const [surface, prefix, name] of ROUTES) {
    test(name, async () => {
      const s = await send(surface, `${prefix}/early`)
      await s.res.text()
      // An HTTP error on every route: the status is held until content (DESIGN §10).
      expect(s.res.status).toBe(502)
      expect(await s.settled()).toMatchObject({ tokens: 0, micros: 0 })
    })
  }
})
