/**
 * The refusals and headers of tokens and money (DESIGN §11): a plan's context cap (400 naming the
 * plan, counted by a tokenizer, not refused on the byte bound), a key's own TPM within the
 * account's (429 naming the key), a key's model list (403), and the token headers on each surface.
 */
import { expect, test } from 'bun:test'
import { afterEach } from '../../support/hooks.ts'
import { startTokensBed, type TokensBed, tokensRequest } from '../../support/tokens-bed.ts'

let bed: TokensBed | undefined
afterEach(async () => {
  await bed?.stop()
  bed = undefined
})

const auth = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' })

test("a plan's max_context_tokens: over it → 400 context_length_exceeded naming the plan; under it by count, served", async () => {
  bed = await startTokensBed({ capped: { rpm: null, rpd: null, max_context_tokens: 60, models: ['*'] } })
  const { key } = await bed.gw.key('capped', 'capped')
  // About 150 bytes (over 60 as a byte bound) but some 30 tokens: served.
  const short = await tokensRequest(bed.gw.url, key, 'chat', false, 50)
  expect(short.status).toBe(200)
  const long = await fetch(`${bed.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: auth(key),
    body: JSON.stringify({
      model: 'bill/m',
      messages: [{ role: 'user', content: 'many words '.repeat(100) }],
    }),
  })
  expect(long.status).toBe(400)
  const err = ((await long.json()) as any).error
  expect(err.code).toBe('context_length_exceeded')
  expect(err.message).toContain("'capped'")
  expect(err.param).toBe('messages')
  // The cap is checked against the admission's input bound, and the message says it is that.
  expect(err.message).toMatch(
    /^This request's input counts \d+ tokens \(the gateway's bound for this model's tokenizer\), over the 60-token context limit/,
  )
  // The Responses surface's field is `input`.
  const responses = await fetch(`${bed.gw.url}/v1/responses`, {
    method: 'POST',
    headers: auth(key),
    body: JSON.stringify({ model: 'bill/m', input: 'many words '.repeat(100) }),
  })
  expect(responses.status).toBe(400)
  expect(((await responses.json()) as any).error).toMatchObject({
    code: 'context_length_exceeded',
    param: 'input',
  })
  expect(bed.upstream.billed.requests).toBe(1)
})

test("the context cap counts the text, not the reservation's allowance per image: two small images and a question fit 8,192", async () => {
  // The reservation allows 5,000 tokens an image (no provider bills more); the plan's cap is on
  // what the request holds: a low-detail image is 85 tokens on OpenAI. Refused on main (10,014).
  bed = await startTokensBed({ capped: { rpm: null, rpd: null, max_context_tokens: 8_192, models: ['*'] } })
  const { key } = await bed.gw.key('capped', 'capped')
  const image = { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } }
  const res = await fetch(`${bed.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: auth(key),
    body: JSON.stringify({
      model: 'bill/m',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Which one is the cat?' }, image, image] }],
      max_tokens: 50,
    }),
  })
  expect(res.status).toBe(200)
  await res.arrayBuffer()
})

test('the context cap counts text that spells a special token as text: served or refused, not a 500', async () => {
  bed = await startTokensBed({ capped: { rpm: null, rpd: null, max_context_tokens: 60, models: ['*'] } })
  const { key } = await bed.gw.key('capped', 'capped')
  const ask = (content: string) =>
    fetch(`${bed!.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: auth(key),
      body: JSON.stringify({ model: 'bill/m', max_tokens: 5, messages: [{ role: 'user', content }] }),
    })
  // Over 60 as a byte bound, so counted; gpt-tokenizer's default threw on the special token's text.
  const under = await ask('What does <|endoftext|> mean in a training file?')
  expect(under.status).toBe(200)
  const over = await ask(`<|endoftext|> ${'many words '.repeat(100)}`)
  expect(over.status).toBe(400)
  expect(((await over.json()) as any).error.code).toBe('context_length_exceeded')
})

test("a key's own TPM binds within the account's (429 naming the key); a key's model list → 403 model_not_allowed", async () => {
  bed = await startTokensBed({ metered: { rpm: null, rpd: null, tpm: 3_000, models: ['*'] } })
  const { id, key } = await bed.gw.key('keyed', 'metered')
  const other = await bed.gw.key('keyed')
  await bed.gw.deps.store.setKeyLimits(id, {
    rpm: null,
    rpd: null,
    tpm: 600,
    tpd: null,
    budgetMicros: null,
    budgetPeriod: null,
    models: ['bill/m'],
  })
  // Each bills 175 tokens and reserves ~400: a third does not fit beside the first two (settled
  // to what they billed before it is refused, tokens-pending-settlement.test.ts).
  expect((await tokensRequest(bed.gw.url, key, 'chat', false, 200)).status).toBe(200)
  expect((await tokensRequest(bed.gw.url, key, 'chat', false, 200)).status).toBe(200)
  const third = await tokensRequest(bed.gw.url, key, 'chat', false, 200)
  expect(third.status).toBe(429)
  expect(((await third.json()) as any).error.message).toContain('this key')
  expect(third.headers.get('x-ratelimit-limit-tokens')).toBe('600')
  // The account's other key still has the account's room.
  expect((await tokensRequest(bed.gw.url, other.key, 'chat', false, 200)).status).toBe(200)
  const outside = await fetch(`${bed.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: auth(key),
    body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
  })
  expect(outside.status).toBe(403)
  expect(((await outside.json()) as any).error.code).toBe('model_not_allowed')
})

test("a key's own RPM within the account's: the request headers show the one with less left, on every surface", async () => {
  bed = await startTokensBed({ metered: { rpm: 100, rpd: null, models: ['*'] } })
  const { id, key } = await bed.gw.key('keyed', 'metered')
  const other = await bed.gw.key('keyed')
  await bed.gw.deps.store.setKeyLimits(id, {
    rpm: 3,
    rpd: null,
    tpm: null,
    tpd: null,
    budgetMicros: null,
    budgetPeriod: null,
    models: null,
  })
  const surfaces = ['chat', 'messages', 'responses'] as const
  const answers = []
  for (const surface of surfaces) answers.push(await tokensRequest(bed.gw.url, key, surface, false, 10))
  expect(answers.map((r) => r.status)).toEqual([200, 200, 200])
  expect(answers.map((r) => r.headers.get('x-ratelimit-limit-requests'))).toEqual(['3', '3', '3'])
  expect(answers.map((r) => r.headers.get('x-ratelimit-remaining-requests'))).toEqual(['2', '1', '0'])
  expect(answers[1]!.headers.get('anthropic-ratelimit-requests-limit')).toBe('3')
  expect(answers[1]!.headers.get('anthropic-ratelimit-requests-remaining')).toBe('1')
  // The key's fourth: 429 naming the key, with its own figures — not the account's 96 left.
  const refused = await tokensRequest(bed.gw.url, key, 'messages', false, 10)
  expect(refused.status).toBe(429)
  expect(await refused.text()).toContain('requests per minute (rpm) of this key')
  expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('3')
  expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0')
  expect(refused.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0')
  expect(refused.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+(\.\d+)?s$/)
  // The account's other key has no limit of its own: the account's window.
  const plain = await tokensRequest(bed.gw.url, other.key, 'chat', false, 10)
  expect(plain.headers.get('x-ratelimit-limit-requests')).toBe('100')
  expect(plain.headers.get('x-ratelimit-remaining-requests')).toBe('96')
})

test('token headers: x-ratelimit-*-tokens and -tokens-day on every surface, anthropic-ratelimit-tokens-* on Messages', async () => {
  bed = await startTokensBed({ metered: { rpm: null, rpd: null, tpm: 3_000, tpd: 50_000, models: ['*'] } })
  const { key } = await bed.gw.key('headers', 'metered')
  for (const surface of ['chat', 'messages', 'responses'] as const) {
    const r = await tokensRequest(bed.gw.url, key, surface, surface === 'messages', 100)
    await r.arrayBuffer()
    expect(r.status).toBe(200)
    expect(r.headers.get('x-ratelimit-limit-tokens')).toBe('3000')
    expect(Number(r.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(3_000)
    expect(r.headers.get('x-ratelimit-reset-tokens')).toMatch(/^\d/)
    expect(r.headers.get('x-ratelimit-limit-tokens-day')).toBe('50000')
    if (surface === 'messages') {
      expect(r.headers.get('anthropic-ratelimit-tokens-limit')).toBe('3000')
      expect(Number(r.headers.get('anthropic-ratelimit-tokens-remaining'))).toBeLessThan(3_000)
      expect(Date.parse(r.headers.get('anthropic-ratelimit-tokens-reset')!)).toBeGreaterThan(Date.now())
    }
  }
  // A request refused before admission carries them too, as read (what the three above used).
  const refused = await fetch(`${bed.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: auth(key),
    body: JSON.stringify({
      model: 'bill/m',
      temperature: 'hot',
      messages: [{ role: 'user', content: 'hi' }],
    }),
  })
  expect(refused.status).toBe(400)
  expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe('3000')
  expect(refused.headers.get('x-ratelimit-limit-tokens-day')).toBe('50000')
  const left = Number(refused.headers.get('x-ratelimit-remaining-tokens'))
  expect(left).toBeGreaterThan(0)
  expect(left).toBeLessThan(3_000)
})
