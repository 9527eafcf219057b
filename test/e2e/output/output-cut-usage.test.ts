/**
 * One ledger at a cut (DESIGN §11, audit63 finding 2): the usage a client reads on an answer cut at
 * its allowance is what the ledger settled, never past what the request held, and never less than
 * the text it was sent. A real gateway and real sockets, on every surface, streamed and not: an
 * upstream that ignores its cap (the billing upstream), and the demo model (whose text the
 * gateway's count reads as more tokens than the demo says).
 */
import { describe, expect, test } from 'bun:test'
import { outputTokenCount } from '../../../src/limits/output-count.ts'
import type { LimitRow } from '../../../src/limits/rows.ts'
import { afterEach } from '../../support/hooks.ts'
import { type SurfaceName, startTokensBed, type TokensBed, tokensBody } from '../../support/tokens-bed.ts'

let bed: TokensBed | undefined
afterEach(async () => {
  await bed?.stop()
  bed = undefined
})

const TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 3_000 }
const PLAN = { metered: { rpm: null, rpd: null, tpm: 3_000, models: ['*'] } }

/** The tokens the ledger settled for `account` (its only request, flushed). */
async function settled(account: string): Promise<number> {
  await bed!.gw.deps.recorder.flush()
  const store = bed!.gw.deps.store
  const a = (await store.getAccount(account))!
  const [s] = await store.rowStates({ accountId: a.id, keyId: null, now: Date.now(), rows: [TPM] })
  return s!.used
}

interface Told {
  input: number
  output: number
  /** The generated text the client was sent, one string a delta. */
  pieces: string[]
}

/** The usage an answer told its client and the text it carried, on `surface`. */
function told(surface: SurfaceName, stream: boolean, text: string): Told {
  if (!stream) {
    const j = JSON.parse(text)
    if (surface === 'chat')
      return {
        input: j.usage.prompt_tokens,
        output: j.usage.completion_tokens,
        pieces: [j.choices[0].message.content],
      }
    if (surface === 'messages')
      return {
        input: j.usage.input_tokens,
        output: j.usage.output_tokens,
        pieces: j.content.map((b: any) => b.text),
      }
    const parts = j.output.flatMap((item: any) => item.content ?? [])
    return {
      input: j.usage.input_tokens,
      output: j.usage.output_tokens,
      pieces: parts.map((p: any) => p.text),
    }
  }
  const events = text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)))
  const pieces: string[] = []
  let input = -1
  let output = -1
  for (const e of events) {
    if (surface === 'chat') {
      for (const c of e.choices ?? []) if (typeof c.delta?.content === 'string') pieces.push(c.delta.content)
      if (e.usage) {
        input = e.usage.prompt_tokens
        output = e.usage.completion_tokens
      }
    } else if (surface === 'messages') {
      if (e.type === 'content_block_delta' && typeof e.delta?.text === 'string') pieces.push(e.delta.text)
      // message_delta's usage is the whole answer's (its input too, where the gateway wrote it).
      if (e.type === 'message_start') input = e.message.usage.input_tokens
      if (e.type === 'message_delta') {
        input = e.usage.input_tokens ?? input
        output = e.usage.output_tokens
      }
    } else {
      if (e.type === 'response.output_text.delta') pieces.push(e.delta)
      if (e.response?.usage) {
        input = e.response.usage.input_tokens
        output = e.response.usage.output_tokens
      }
    }
  }
  return { input, output, pieces }
}

async function ask(
  surface: SurfaceName,
  stream: boolean,
  max: number | null,
  opts: { model?: string; prompt?: string } = {},
): Promise<{ told: Told; ledger: number; held: number; cut: boolean }> {
  const account = `a${Math.random().toString(36).slice(2, 10)}`
  const { key } = await bed!.gw.key(account, 'metered')
  const [path, body] = tokensBody(surface, stream, max, opts.model)
  if (opts.prompt !== undefined) {
    if (surface === 'responses') body.input = opts.prompt
    else body.messages = [{ role: 'user', content: opts.prompt }]
  }
  if (stream && surface === 'chat') body.stream_options = { include_usage: true }
  const res = await fetch(`${bed!.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  expect(res.status).toBe(200)
  const sent = res.headers.get('x-switchyard-max-tokens')
  const cut = /"length"|"max_tokens"|"incomplete"/.test(text)
  return { told: told(surface, stream, text), ledger: await settled(account), held: Number(sent ?? max), cut }
}

/** What a cut answer told its client is what the ledger settled, within the hold, and covers its text. */
function oneLedger(r: Awaited<ReturnType<typeof ask>>, kind: 'o200k' | 'demo'): void {
  expect(r.cut).toBe(true)
  expect(r.told.input + r.told.output).toBe(r.ledger)
  expect(r.told.output).toBeLessThanOrEqual(r.held)
  // Never less than what was relayed: the text the client got, counted as the gate counts it.
  const relayed = outputTokenCount(r.told.pieces.join(''), kind)
  expect(r.told.output).toBeGreaterThanOrEqual(relayed)
}

const SURFACES: SurfaceName[] = ['chat', 'messages', 'responses']

describe('an upstream ignoring its cap, cut off its 10-token chunks', () => {
  for (const surface of SURFACES)
    for (const stream of [true, false])
      test(`${surface}, ${stream ? 'stream' : 'JSON'}: a cap off the chunks' edges (955) and on one (950)`, async () => {
        bed ??= await startTokensBed(PLAN, {
          answerTokens: 3_000,
          upstream: { ignoreCap: true, chunkDelayMs: 1 },
        })
        for (const max of [955, 950]) oneLedger(await ask(surface, stream, max), 'o200k')
      })
})

/** About 2,600 tokens of prompt on the demo's bound: what is left of the window is a few hundred. */
const LONG = Array.from({ length: 800 }, (_, i) => `word${i % 50}`).join(' ')

describe('the demo model', () => {
  for (const surface of SURFACES)
    for (const stream of [true, false])
      test(`${surface}, ${stream ? 'stream' : 'JSON'}: max_tokens 5 honoured as the gateway counts it; uncapped on a window nearly full`, async () => {
        bed ??= await startTokensBed(PLAN)
        // Its own cap: the answer it gives fits 5 tokens as the gate counts them, so the gateway
        // does not cut it, and its own usage is what the client reads and the ledger settles.
        const capped = await ask(surface, stream, 5, {
          model: 'demo/echo-pro',
          prompt: 'hello there, how are you today',
        })
        expect(capped.told.pieces.join('')).toBe('Echo: hello the')
        expect(capped.told.output).toBe(5)
        expect(capped.told.input + capped.told.output).toBe(capped.ledger)
        // The window leaves less than the echo of a long prompt: the answer ends where the hold
        // does (the demo sent the cap the window leaves), told what the ledger settled.
        const full = await ask(surface, stream, null, { model: 'demo/echo-pro', prompt: LONG })
        expect(full.cut).toBe(true)
        expect(full.told.input + full.told.output).toBe(full.ledger)
        expect(full.told.output).toBeLessThanOrEqual(full.held)
        expect(full.told.output).toBeGreaterThanOrEqual(outputTokenCount(full.told.pieces.join(''), 'demo'))
      })
})

describe('an upstream honouring its cap: what fits is relayed whole, not cut a chunk short', () => {
  for (const surface of SURFACES)
    for (const stream of [true, false])
      test(`${surface}, ${stream ? 'stream' : 'JSON'}: caps 955 and 950 answered to the token, told what the ledger settled`, async () => {
        bed ??= await startTokensBed(PLAN, { answerTokens: 3_000, upstream: { chunkDelayMs: 1 } })
        for (const max of [955, 950]) {
          const r = await ask(surface, stream, max)
          expect(r.told.output).toBe(max)
          expect(outputTokenCount(r.told.pieces.join(''), 'o200k')).toBe(max)
          expect(r.told.input + r.told.output).toBe(r.ledger)
        }
      })
})
