/**
 * The attempt loop for streams (DESIGN §10), through the real gateway and the fault-injecting
 * upstream: the status and first bytes are held until the first content-bearing event, so any
 * failure before it is retried or failed over unseen; a slow first token fails over when there is
 * somewhere to go and is waited on when there is not; after content, a failure ends the stream
 * with the surface's in-band error (never a complete-looking answer), and the upstream is let go
 * at once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { answerPieces, type Wire } from '../../support/fault-upstream.ts'
import { beforeEach } from '../../support/hooks.ts'
import { readStream } from '../../support/read-stream.ts'
import { type ResilienceBed, startResilienceBed } from '../../support/resilience-bed.ts'

let bed: ResilienceBed
beforeAll(async () => {
  bed = await startResilienceBed({ words: 12 })
})
afterAll(() => bed.stop())
beforeEach(() => bed.reset())

const SURFACES: Array<[Wire, string]> = [
  ['chat', 'prime/gpt-a'],
  ['messages', 'prime/gpt-a'],
  ['responses', 'prime/gpt-a'],
]

describe('before content: retried or failed over unseen, on every surface', () => {
  for (const [wire, model] of SURFACES) {
    test(`${wire}: a 500, a reset and a cut before the first word, then the answer`, async () => {
      bed.up.script({ model: 'gpt-a' }, 'server_error', 'reset', { fault: 'cut', after: 0 }, 'ok')
      const res = await bed.post(wire, model, { stream: true })
      expect(res.status).toBe(200)
      const s = readStream(wire, await res.text())
      expect(s).toMatchObject({ text: bed.up.answer(), complete: true, error: null })
      expect(res.headers.get('x-switchyard-attempts')).toBe('4')
      expect(bed.up.attempts()).toHaveLength(4)
    })
  }

  test('chat: 503 for good, the anthropic fallback answers the stream, translated, named', async () => {
    bed.up.script({ model: 'gpt-a' }, 'unavailable')
    const res = await bed.post('chat', 'prime/gpt-a', { stream: true })
    expect(res.status).toBe(200)
    const s = readStream('chat', await res.text())
    expect(s).toMatchObject({ text: bed.up.answer(), complete: true, model: 'claude/claude-b' })
    expect(bed.up.attempts().map((a) => [a.wire, a.model])).toEqual([
      ['chat', 'gpt-a'],
      ['chat', 'gpt-a'],
      ['chat', 'gpt-a'],
      ['messages', 'claude-b'],
    ])
  })

  test('messages: the anthropic primary overloaded, an openai fallback streams Messages events', async () => {
    bed.up.script({ model: 'claude-b' }, 'overloaded')
    const res = await bed.post('messages', 'claude/claude-b', { stream: true })
    expect(res.status).toBe(200)
    const s = readStream('messages', await res.text())
    expect(s).toMatchObject({ text: bed.up.answer(), complete: true, model: 'prime/gpt-solo' })
  })

  // The slow model is asked as `tight/…`: prime's twin, first_token_ms 400.
  test('a slow first token with a fallback: failed over at first_token_ms, the slow one let go', async () => {
    bed.up.script({ model: 'gpt-a' }, { fault: 'slow_first_token', delayMs: 5_000 })
    const t0 = performance.now()
    const res = await bed.post('chat', 'tight/gpt-a', { stream: true })
    const s = readStream('chat', await res.text())
    expect(s).toMatchObject({ text: bed.up.answer(), complete: true, model: 'claude/claude-b' })
    // Long before the slow token (5 s): the fallback's model already shows the slow one was not
    // waited on; a healthy failover takes ~0.4 s, and a loaded machine stretches it, not to 4.5 s.
    expect(performance.now() - t0).toBeLessThan(4_500)
    const slow = bed.up.attempts({ model: 'gpt-a' })
    expect(slow).toHaveLength(1)
    expect(slow[0]!.endedBy).toBe('client')
    expect(slow[0]!.endedAt! - slow[0]!.at).toBeLessThan(4_500)
  })

  test('a slow first token whose only fallback cannot be tried (its circuits open) is waited on, not a 504', async () => {
    // tight/gpt-small falls back to spare/gpt-s only: open its circuit (3 failures).
    bed.up.script({ model: 'gpt-s' }, 'unavailable')
    for (let i = 0; i < 3; i++) await (await bed.post('chat', 'spare/gpt-s')).text()
    const before = bed.up.attempts({ model: 'gpt-s' }).length
    // Past first_token_ms (400) for sure: the upstream starts its wait after the gateway's timer.
    bed.up.script({ model: 'gpt-small' }, { fault: 'slow_first_token', delayMs: 700 })
    const res = await bed.post('chat', 'tight/gpt-small', { stream: true })
    const s = readStream('chat', await res.text())
    expect(res.status).toBe(200)
    expect(s).toMatchObject({ text: bed.up.answer(), complete: true, error: null, model: 'tight/gpt-small' })
    expect(bed.up.attempts({ model: 'gpt-small' })).toHaveLength(1)
    expect(bed.up.attempts({ model: 'gpt-s' })).toHaveLength(before)
  })

  test('a slow first token with no fallback is waited on (a reasoning model is not an error)', async () => {
    bed.up.script({ model: 'gpt-solo' }, { fault: 'slow_first_token', delayMs: 700 })
    const res = await bed.post('chat', 'tight/gpt-solo', { stream: true })
    const s = readStream('chat', await res.text())
    expect(s).toMatchObject({ text: bed.up.answer(), complete: true, error: null })
    expect(bed.up.attempts()).toHaveLength(1)
  })
})

describe('malformed events and endings', () => {
  test('chat: a malformed event mid-stream is skipped and counted; the answer is whole', async () => {
    bed.up.script({ model: 'gpt-solo' }, { fault: 'malformed', after: 4 })
    const res = await bed.post('chat', 'prime/gpt-solo', { stream: true })
    const body = await res.text()
    expect(body).not.toContain('{"cont\n')
    expect(readStream('chat', body)).toMatchObject({ text: bed.up.answer(), complete: true, error: null })
    const metrics = await (await fetch(`${bed.gw.url}/metrics`)).text()
    expect(metrics).toContain('switchyard_upstream_malformed_events_total{provider="prime"} 1')
  })

  for (const wire of ['messages', 'responses'] as const) {
    test(`${wire} (translated from openai): a malformed event is skipped and counted; the answer is whole`, async () => {
      bed.up.script({ model: 'gpt-solo' }, { fault: 'malformed', after: 4 })
      const res = await bed.post(wire, 'prime/gpt-solo', { stream: true })
      expect(readStream(wire, await res.text())).toMatchObject({
        text: bed.up.answer(),
        complete: true,
        error: null,
      })
      expect(bed.up.attempts()).toHaveLength(1)
      const metrics = await (await fetch(`${bed.gw.url}/metrics`)).text()
      expect(metrics).toMatch(/switchyard_upstream_malformed_events_total\{provider="prime"\} [1-9]/)
    })
  }

  test('chat on an anthropic provider: a malformed event is skipped; the answer is whole', async () => {
    bed.up.script({ model: 'claude-b' }, { fault: 'malformed', after: 4 })
    const res = await bed.post('chat', 'claude/claude-b', { stream: true })
    expect(readStream('chat', await res.text())).toMatchObject({
      text: bed.up.answer(),
      complete: true,
      error: null,
    })
    expect(bed.up.attempts()).toHaveLength(1)
  })

  test('chat: a complete stream without data: [DONE] is finished at once', async () => {
    bed.up.script({ model: 'gpt-solo' }, 'no_done')
    const res = await bed.post('chat', 'prime/gpt-solo', { stream: true })
    expect(readStream('chat', await res.text())).toMatchObject({ text: bed.up.answer(), complete: true })
  })
})

describe('after content, continued on a prefill fallback: one answer, exactly once', () => {
  for (const wire of ['chat', 'messages', 'responses'] as const) {
    test(`${wire}: a cut after 5 words is finished by spare/gpt-s from the relayed text`, async () => {
      bed.up.script({ model: 'gpt-a' }, { fault: 'cut', after: 5 })
      const res = await bed.post(wire, 'prime/gpt-a', { stream: true })
      expect(res.status).toBe(200)
      const rid = res.headers.get('x-request-id')!
      const s = readStream(wire, await res.text())
      expect(s).toMatchObject({ text: bed.up.answer(), complete: true, error: null })
      // The fallback without prefill (claude-b) is passed over; the continuation carried the text.
      const seen = bed.up.attempts()
      expect(seen.map((a) => a.model)).toEqual(['gpt-a', 'gpt-s'])
      expect(seen[1]!.prefill).toBe(answerPieces(12).slice(0, 5).join(''))
      const row = (await bed.requests()).find((x: any) => x.request_id === rid)
      expect(row).toMatchObject({ status: 200, attempts: 2, answered_by: 'spare/gpt-s' })
      expect(row.completion_tokens).toBeGreaterThan(0)
    })
  }

  // The client reads the usage the request is recorded (and billed) with: both parts', not the
  // continuation's alone (its prompt counts the relayed text, its completion only the rest).
  for (const wire of ['chat', 'messages', 'responses'] as const) {
    test(`${wire}: a continued stream's usage, as the client reads it, is the log row's (both parts)`, async () => {
      bed.up.script({ model: 'gpt-a' }, { fault: 'cut', after: 5 })
      const res = await bed.post(wire, 'prime/gpt-a', { stream: true, includeUsage: true })
      const rid = res.headers.get('x-request-id')!
      const s = readStream(wire, await res.text())
      expect(s).toMatchObject({ text: bed.up.answer(), complete: true, error: null })
      const row = (await bed.requests()).find((x: any) => x.request_id === rid)
      expect(row.attempts).toBe(2)
      expect(s.usage).toEqual({ input: row.prompt_tokens, output: row.completion_tokens })
    })
  }

  test('chat: a continuation cut in its turn is a failure of its target: three in a row open its circuit', async () => {
    bed.up.script({ model: 'gpt-a' }, { fault: 'cut', after: 3 })
    // The continuation sends 2 words of what is left, then its connection is cut too.
    bed.up.script({ model: 'gpt-s' }, { fault: 'cut', after: 2 })
    for (let i = 0; i < 3; i++) {
      const res = await bed.post('chat', 'prime/gpt-a', { stream: true })
      expect(readStream('chat', await res.text())).toMatchObject({ complete: false })
    }
    expect(bed.up.attempts({ model: 'gpt-s' })).toHaveLength(3)
    const spare = bed.gw.deps.resilience.board.states().find((c) => c.model === 'gpt-s')
    expect(spare).toMatchObject({ provider: 'spare', key: 0, state: 'open' })
  })

  test('chat: a stall after content is continued too, and the stalled upstream let go', async () => {
    bed.up.script({ model: 'gpt-a' }, { fault: 'stall', after: 3 })
    const res = await bed.post('chat', 'tight/gpt-a', { stream: true })
    const s = readStream('chat', await res.text())
    expect(s).toMatchObject({ text: bed.up.answer(), complete: true, error: null })
    const [stalled] = bed.up.attempts({ model: 'gpt-a' })
    await Bun.sleep(100)
    expect(stalled!.endedBy).toBe('client')
  })

  test('chat asking to think, cut after content: claude-q continues without thinking (Anthropic refuses a prefill while thinking)', async () => {
    bed.up.script({ model: 'claude-p' }, { fault: 'cut', after: 5 })
    const res = await fetch(`${bed.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude/claude-p',
        messages: [{ role: 'user', content: 'count for me' }],
        stream: true,
        reasoning_effort: 'low',
      }),
    })
    expect(readStream('chat', await res.text())).toMatchObject({
      text: bed.up.answer(),
      complete: true,
      error: null,
    })
    const [first, second] = bed.up.attempts()
    expect(first!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
    expect(second!.model).toBe('claude-q')
    expect(second!.prefill).toBe(answerPieces(12).slice(0, 5).join(''))
    expect('thinking' in second!.body).toBe(false)
  })

  test('chat: the prefill fallback refusing the continuation leaves the original error in-band', async () => {
    bed.up.script({ model: 'gpt-a' }, { fault: 'cut', after: 5 })
    bed.up.script({ model: 'gpt-s' }, 'bad_request')
    const res = await bed.post('chat', 'prime/gpt-a', { stream: true })
    const s = readStream('chat', await res.text())
    expect(s.complete).toBe(false)
    expect(s.error?.code).toBe('upstream_stream_interrupted')
    expect(bed.up.answer().startsWith(s.text)).toBe(true)
  })
})

describe('after content, not continuable: a clean in-band error', () => {
  // The continuation carries only text: a tool call the client has begun cannot be finished by
  // another target (it would start a second call at the same index, and an SDK would merge the two
  // into arguments that are not JSON, presented as complete).
  for (const wire of ['chat', 'messages', 'responses'] as const) {
    test(`${wire}: a cut mid tool call is not continued on the prefill fallback`, async () => {
      // Two words, the call naming `weather`, its first piece of arguments, then the cut.
      bed.up.script({ model: 'gpt-a' }, { fault: 'cut', words: 2, toolCall: true, after: 4 })
      bed.up.script({ model: 'gpt-s' }, { fault: 'ok', words: 2, toolCall: true })
      const res = await bed.post(wire, 'prime/gpt-a', { stream: true, tools: true })
      expect(res.status).toBe(200)
      const s = readStream(wire, await res.text())
      expect(s).toMatchObject({ text: bed.up.answer(2), calls: [{ name: 'weather', arguments: '{"ci' }] })
      expect(s.complete).toBe(false)
      expect(s.error).not.toBeNull()
      if (wire === 'chat') expect(s.error.code).toBe('upstream_stream_interrupted')
      expect(bed.up.attempts().map((a) => a.model)).toEqual(['gpt-a'])
    })
  }
})

describe('Messages to an anthropic model with a prefill fallback: what translation would lose keeps the pass-through', () => {
  const BETA = 'interleaved-thinking-2025-05-14'
  const turns = [{ role: 'user', content: 'count for me' }]
  const messages = (extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    fetch(`${bed.gw.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': bed.key,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
        ...headers,
      },
      body: JSON.stringify({
        model: 'claude/claude-p',
        max_tokens: 2048,
        stream: true,
        messages: turns,
        ...extra,
      }),
    })

  test('nothing to lose: continuable, so translated, and a cut after 5 words is finished by claude-q', async () => {
    bed.up.script({ model: 'claude-p' }, { fault: 'cut', after: 5 })
    const s = readStream('messages', await (await messages()).text())
    expect(s).toMatchObject({ text: bed.up.answer(), complete: true, error: null })
    const [first, second] = bed.up.attempts()
    // Translated: the chat form's content blocks, not the client's string.
    expect(first!.body.messages[0].content).toEqual([{ type: 'text', text: 'count for me' }])
    expect(second!.model).toBe('claude-q')
    expect(second!.prefill).toBe(answerPieces(12).slice(0, 5).join(''))
  })

  test.each([
    ['thinking', { thinking: { type: 'enabled', budget_tokens: 1024 } }, {}],
    [
      'cache_control',
      { system: [{ type: 'text', text: 'Count.', cache_control: { type: 'ephemeral' } }] },
      {},
    ],
    [
      'a thinking block in the history',
      {
        messages: [
          ...turns,
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Counting.', signature: 'c2ln' },
              { type: 'text', text: 'one' },
            ],
          },
          { role: 'user', content: 'go on' },
        ],
      },
      {},
    ],
    ['an anthropic-beta header', {}, { 'anthropic-beta': BETA }],
    ['top_k', { top_k: 5 }, {}],
  ] as const)('%s: the request passes through as the client sent it', async (_, extra, headers) => {
    const res = await messages(extra, headers)
    expect(readStream('messages', await res.text())).toMatchObject({
      text: bed.up.answer(),
      complete: true,
      error: null,
    })
    const [first] = bed.up.attempts()
    expect(first!.body).toEqual({
      model: 'claude-p',
      max_tokens: 2048,
      stream: true,
      messages: turns,
      ...extra,
    })
    for (const [name, value] of Object.entries(headers)) expect(first!.headers[name]).toBe(value)
  })

  test('not continuable then: a cut after 5 words → the words, then the error event; claude-q never asked', async () => {
    bed.up.script({ model: 'claude-p' }, { fault: 'cut', after: 5 })
    const thinking = { type: 'enabled', budget_tokens: 1024 }
    const res = await messages({ thinking }, { 'anthropic-beta': BETA })
    expect(res.status).toBe(200)
    const s = readStream('messages', await res.text())
    expect(s.complete).toBe(false)
    expect(s.error).not.toBeNull()
    expect(s.text).toBe(answerPieces(12).slice(0, 5).join(''))
    const seen = bed.up.attempts()
    expect(seen.map((a) => a.model)).toEqual(['claude-p'])
    expect(seen[0]!.body.thinking).toEqual(thinking)
    expect(seen[0]!.headers['anthropic-beta']).toBe(BETA)
  })
})

describe('after content, with nowhere to continue: a clean in-band error', () => {
  for (const wire of ['chat', 'messages', 'responses'] as const) {
    test(`${wire}: a cut after 5 words → the words, then the error; never a complete-looking end`, async () => {
      bed.up.script({ model: 'gpt-solo' }, { fault: 'cut', after: 5 })
      const res = await bed.post(wire, 'prime/gpt-solo', { stream: true })
      expect(res.status).toBe(200)
      const s = readStream(wire, await res.text())
      expect(s.complete).toBe(false)
      expect(s.error).not.toBeNull()
      expect(bed.up.answer().startsWith(s.text)).toBe(true)
      expect(s.text.length).toBeGreaterThan(0)
      expect(bed.up.attempts()).toHaveLength(1)
    })
  }

  for (const wire of ['chat', 'messages', 'responses'] as const) {
    test(`${wire}: a clean close mid-answer is reported as an early end, not as a reset`, async () => {
      bed.up.script({ model: 'gpt-solo' }, { fault: 'end_early', after: 4 })
      const res = await bed.post(wire, 'prime/gpt-solo', { stream: true })
      const s = readStream(wire, await res.text())
      expect(s.complete).toBe(false)
      const said = JSON.stringify(s.error)
      expect(said).not.toContain('ECONNRESET')
      expect(said).not.toContain('reset')
    })
  }

  test('a stall after content: the error at idle_ms, and the upstream socket closed at once', async () => {
    bed.up.script({ model: 'gpt-solo' }, { fault: 'stall', after: 3 })
    const t0 = performance.now()
    const res = await bed.post('chat', 'tight/gpt-solo', { stream: true })
    const s = readStream('chat', await res.text())
    const errorAt = performance.now() - t0
    expect(s.complete).toBe(false)
    expect(s.error?.code).toBe('upstream_timeout')
    const [a] = await bed.up.waitForAttempts(1)
    // Closed by us within a moment of giving up (the upstream would have held it forever).
    await Bun.sleep(100)
    expect(a!.endedBy).toBe('client')
    expect(a!.endedAt!).toBeLessThan(a!.at + errorAt + 150)
  })
})

describe('a structured answer cut after content is not continued', () => {
  let jbed: ResilienceBed
  const features = ['streaming', 'system_messages', 'json_schema']
  beforeAll(async () => {
    jbed = await startResilienceBed({
      words: 12,
      providers: (url) => [
        {
          prefix: 'prime',
          kind: 'openai',
          base_url: `${url}/v1`,
          api_key: 'sk-prime-json-0005',
          models: [
            {
              name: 'gpt-j',
              context_window: 128_000,
              max_output_tokens: 4096,
              features,
              fallbacks: ['spare/gpt-js'],
            },
          ],
        },
        {
          prefix: 'spare',
          kind: 'openai',
          base_url: `${url}/v1`,
          api_key: 'sk-spare-json-0006',
          models: [
            {
              name: 'gpt-js',
              context_window: 128_000,
              max_output_tokens: 4096,
              features: [...features, 'prefill'],
            },
          ],
        },
      ],
    })
  })
  afterAll(() => jbed.stop())

  // A JSON document one model began is not another's to finish (and Anthropic refuses a prefill
  // with JSON outputs): the stream ends with the error, the prefill fallback is never asked.
  test('chat with response_format json_schema, cut after 5 words: the in-band error, no continuation', async () => {
    jbed.up.script({ model: 'gpt-j' }, { fault: 'cut', after: 5 })
    const res = await fetch(`${jbed.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jbed.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'prime/gpt-j',
        messages: [{ role: 'user', content: 'count for me' }],
        stream: true,
        response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'object' } } },
      }),
    })
    expect(res.status).toBe(200)
    const s = readStream('chat', await res.text())
    expect(s.complete).toBe(false)
    expect(s.error?.code).toBe('upstream_stream_interrupted')
    expect(jbed.up.attempts().map((a) => a.model)).toEqual(['gpt-j'])
  })
})
