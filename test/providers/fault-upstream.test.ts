/**
 * The fault-injecting upstream (`test/support/fault-upstream.ts`) does what the resilience tests
 * rely on: each wire's answer is well formed and complete, scripts run in order per model and key,
 * and every fault happens on the socket as described (reset, silence, cut, stall), with attempts
 * recorded.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type FaultUpstream, startFaultUpstream, type Wire } from '../support/fault-upstream.ts'

let up: FaultUpstream
beforeAll(async () => {
  up = await startFaultUpstream({ words: 8 })
})
afterAll(() => up.stop())

const PATHS: Record<Wire, string> = {
  chat: '/v1/chat/completions',
  messages: '/v1/messages',
  responses: '/v1/responses',
}

function call(
  wire: Wire,
  model: string,
  opts: { stream?: boolean; key?: string; signal?: AbortSignal; prefill?: string } = {},
) {
  const key = opts.key ?? 'sk-test'
  const turns: any[] = [{ role: 'user', content: 'count' }]
  if (opts.prefill !== undefined) turns.push({ role: 'assistant', content: opts.prefill })
  const body: any =
    wire === 'responses'
      ? { model, input: turns, stream: opts.stream ?? false }
      : {
          model,
          messages: turns,
          stream: opts.stream ?? false,
          ...(wire === 'messages' ? { max_tokens: 100 } : {}),
        }
  const headers: Record<string, string> =
    wire === 'messages'
      ? { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }
      : { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  return fetch(`${up.url}${PATHS[wire]}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: opts.signal,
  })
}

/** The `data:` payloads of an SSE body, and the text its content events carry. */
function events(body: string) {
  const datas = body
    .split('\n\n')
    .filter(Boolean)
    .map((e) =>
      e
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6),
    )
  let text = ''
  for (const d of datas) {
    if (d === '[DONE]') continue
    let e: any
    try {
      e = JSON.parse(d)
    } catch {
      continue
    }
    text += e.choices?.[0]?.delta?.content ?? (e.type === 'content_block_delta' ? e.delta.text : '') ?? ''
    if (e.type === 'response.output_text.delta') text += e.delta
  }
  return { datas, text }
}

const TERMINAL: Record<Wire, (datas: string[]) => boolean> = {
  chat: (d) => d.at(-1) === '[DONE]' && d.some((x) => x.includes('"finish_reason":"stop"')),
  messages: (d) => JSON.parse(d.at(-1)!).type === 'message_stop',
  responses: (d) => JSON.parse(d.at(-1)!).type === 'response.completed',
}

function jsonText(wire: Wire, j: any): string {
  if (wire === 'chat') return j.choices[0].message.content
  if (wire === 'messages') return j.content[0].text
  return j.output[0].content[0].text
}

describe('fault upstream', () => {
  for (const wire of ['chat', 'messages', 'responses'] as const) {
    test(`${wire}: ok answers the whole text, streamed to its terminal event and as JSON`, async () => {
      const s = await (await call(wire, 'ok-model', { stream: true })).text()
      const { datas, text } = events(s)
      expect(text).toBe(up.answer())
      expect(TERMINAL[wire](datas)).toBe(true)
      for (const d of datas) if (d !== '[DONE]') JSON.parse(d)
      const j = (await (await call(wire, 'ok-model')).json()) as any
      expect(jsonText(wire, j)).toBe(up.answer())
      expect(j.model).toBe('ok-model')
    })
  }

  test('a script runs in order, its last step repeating; key scripts beat model scripts; attempts are recorded', async () => {
    up.clear()
    up.script({ model: 'm1' }, 'server_error', 'ok')
    up.script({ key: 'sk-dead' }, 'unauthorized')
    expect((await call('chat', 'm1')).status).toBe(500)
    expect((await call('chat', 'm1')).status).toBe(200)
    expect((await call('chat', 'm1')).status).toBe(200)
    expect((await call('chat', 'm1', { key: 'sk-dead' })).status).toBe(401)
    const a = up.attempts({ model: 'm1' })
    expect(a.map((x) => x.fault)).toEqual(['server_error', 'ok', 'ok', 'unauthorized'])
    expect(a.map((x) => x.key)).toEqual(['sk-test', 'sk-test', 'sk-test', 'sk-dead'])
    expect(a[1]!.at).toBeGreaterThanOrEqual(a[0]!.at)
    expect(a.every((x) => x.endedBy === 'server')).toBe(true)
  })

  test('error statuses in each wire’s words, retry-after headers as scripted', async () => {
    up.clear()
    up.script({ model: 'rl' }, { fault: 'rate_limited', retryAfter: '2', retryAfterMs: '1500' })
    const r = await call('chat', 'rl')
    expect(r.status).toBe(429)
    expect(r.headers.get('retry-after')).toBe('2')
    expect(r.headers.get('retry-after-ms')).toBe('1500')
    expect(((await r.json()) as any).error.code).toBe('rate_limit_exceeded')
    up.script({ model: 'q' }, 'quota')
    expect(((await (await call('chat', 'q')).json()) as any).error.code).toBe('insufficient_quota')
    const billing = await call('messages', 'q')
    expect([billing.status, ((await billing.json()) as any).error.type]).toEqual([402, 'billing_error'])
    up.script({ model: 'ctx' }, 'context_overflow')
    expect(((await (await call('responses', 'ctx')).json()) as any).error).toMatchObject({
      code: 'context_length_exceeded',
      param: 'input',
    })
    up.script({ model: 'o' }, 'overloaded')
    const o = await call('messages', 'o')
    expect([o.status, ((await o.json()) as any).error.type]).toEqual([529, 'overloaded_error'])
    up.script({ model: 'cp' }, 'content_policy')
    expect(((await (await call('chat', 'cp')).json()) as any).error.code).toBe('content_filter')
    const refusal = (await (await call('messages', 'cp')).json()) as any
    expect(refusal.stop_reason).toBe('refusal')
  })

  test('it refuses what the providers refuse: no key, no max_tokens, no anthropic-version', async () => {
    const noKey = await fetch(`${up.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(noKey.status).toBe(401)
    const noMax = await fetch(`${up.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(noMax.status).toBe(400)
    const noVersion = await fetch(`${up.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k' },
      body: JSON.stringify({ model: 'x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(noVersion.status).toBe(400)
  })

  test('reset: the socket closes before any byte', async () => {
    up.clear()
    up.script({ model: 'r' }, 'reset')
    const err = await call('chat', 'r').catch((e) => e)
    expect(err.code).toBe('ECONNRESET')
    expect(up.attempts({ model: 'r' })).toHaveLength(1)
  })

  test('silent: nothing until the client gives up, which the attempt records', async () => {
    up.clear()
    up.script({ model: 's' }, 'silent')
    const t = performance.now()
    const err = await call('chat', 's', { signal: AbortSignal.timeout(150) }).catch((e) => e)
    expect(err.name).toBe('TimeoutError')
    expect(performance.now() - t).toBeGreaterThanOrEqual(140)
    await Bun.sleep(20)
    expect(up.attempts({ model: 's' })[0]!.endedBy).toBe('client')
  })

  for (const wire of ['chat', 'messages', 'responses'] as const) {
    test(`${wire}: cut after 3 of 8 words aborts the connection; end_early closes it cleanly; neither sends the terminal event`, async () => {
      up.clear()
      up.script({ model: 'cut' }, { fault: 'cut', after: 3 })
      const res = await call(wire, 'cut', { stream: true })
      expect(res.status).toBe(200)
      const reader = res.body!.getReader()
      let got = ''
      const err = await (async () => {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return null
          got += new TextDecoder().decode(value)
        }
      })().catch((e) => e)
      expect(err?.code).toBe('ECONNRESET')
      expect(events(got).text).toBe(up.answer().split(' ').slice(0, 3).join(' '))
      expect(up.attempts({ model: 'cut' })[0]!.sent).toBe(3)
      const json = await call(wire, 'cut')
      expect(json.status).toBe(200)
      expect((await json.text().catch((e) => e)).code).toBe('ECONNRESET')

      up.script({ model: 'early' }, { fault: 'end_early', after: 3 })
      const early = events(await (await call(wire, 'early', { stream: true })).text())
      expect(early.text).toBe(up.answer().split(' ').slice(0, 3).join(' '))
      expect(TERMINAL[wire](early.datas)).toBe(false)
    })
  }

  test('stall: the words so far, a pause of delayMs, then the rest; a stall without end lasts until the client cancels', async () => {
    up.clear()
    up.script({ model: 'st' }, { fault: 'stall', after: 2, delayMs: 300 })
    const res = await call('chat', 'st', { stream: true })
    const t = performance.now()
    const text = await res.text()
    expect(performance.now() - t).toBeGreaterThanOrEqual(250)
    expect(events(text).text).toBe(up.answer())

    up.script({ model: 'st2' }, { fault: 'stall', after: 2 })
    const r2 = await call('messages', 'st2', { stream: true })
    const reader = r2.body!.getReader()
    await reader.read()
    await reader.cancel()
    await Bun.sleep(50)
    const a = up.attempts({ model: 'st2' })[0]!
    expect(a.endedBy).toBe('client')
    expect(a.sent).toBeLessThanOrEqual(2)
  })

  test('slow first token: headers and the non-content head at once, the first word after delayMs', async () => {
    up.clear()
    up.script({ model: 'slow' }, { fault: 'slow_first_token', delayMs: 300 })
    const t = performance.now()
    const res = await call('chat', 'slow', { stream: true })
    const headersAt = performance.now() - t
    const text = await res.text()
    expect(headersAt).toBeLessThan(200)
    expect(performance.now() - t).toBeGreaterThanOrEqual(290)
    expect(events(text).text).toBe(up.answer())
  })

  test('malformed: one event that is not JSON, the answer otherwise complete; no_done: chat without [DONE]', async () => {
    up.clear()
    up.script({ model: 'bad' }, { fault: 'malformed', after: 4 })
    const { datas, text } = events(await (await call('responses', 'bad', { stream: true })).text())
    expect(datas.filter((d) => !isJson(d))).toHaveLength(1)
    expect(text).toBe(up.answer())
    up.script({ model: 'nd' }, 'no_done')
    const nd = events(await (await call('chat', 'nd', { stream: true })).text())
    expect(nd.datas).not.toContain('[DONE]')
    expect(nd.datas.at(-1)).toContain('"finish_reason":"stop"')
  })

  test('a request ending with the answer’s beginning as assistant prefill gets the rest', async () => {
    up.clear()
    const full = up.answer()
    const prefix = full.slice(0, 10) // ends inside a word
    for (const wire of ['chat', 'messages', 'responses'] as const) {
      const { text } = events(await (await call(wire, 'cont', { stream: true, prefill: prefix })).text())
      expect(prefix + text).toBe(full)
    }
    expect(up.attempts({ model: 'cont' }).map((a) => a.prefill)).toEqual([prefix, prefix, prefix])
  })
})

function isJson(s: string): boolean {
  try {
    JSON.parse(s)
    return true
  } catch {
    return s === '[DONE]'
  }
}
