import { describe, expect, test } from 'bun:test'
import type { ProviderConfig } from '../../src/config/schema.ts'
import {
  abortError,
  DEFAULT_TIMEOUTS,
  mergeSignals,
  openAIStyleError,
  readJson,
  readText,
  resolveTimeouts,
  sanitizeMessage,
  upstreamFetch,
} from '../../src/providers/http.ts'
import { GatewayError } from '../../src/util/errors.ts'
import { Deadline, realScheduler } from '../../src/util/scheduler.ts'
import { validateError } from '../support/openai-schemas.ts'
import { bytes, callContext } from './helpers.ts'

const provider: ProviderConfig = {
  prefix: 'up',
  kind: 'openai',
  models: [{ name: 'm', context_window: 1000, max_output_tokens: 100, features: [] }],
}

const openAIBody = (message: string, code: string | null = null, param: string | null = null) =>
  JSON.stringify({ error: { message, type: 'invalid_request_error', param, code } })

describe('resolveTimeouts', () => {
  test('config keys win over the defaults', () => {
    expect(resolveTimeouts(provider)).toEqual({ firstByteMs: 120_000, idleMs: 120_000, totalMs: 600_000 })
    expect(DEFAULT_TIMEOUTS).toEqual(resolveTimeouts(provider))
    expect(resolveTimeouts({ ...provider, timeouts: { first_byte_ms: 1, idle_ms: 2, total_ms: 3 } })).toEqual(
      {
        firstByteMs: 1,
        idleMs: 2,
        totalMs: 3,
      },
    )
    expect(resolveTimeouts({ ...provider, timeouts: { idle_ms: 2 } }).idleMs).toBe(2)
  })
})

describe('openAIStyleError', () => {
  const cases: Array<[string, number, string, number, string]> = [
    [
      '400 keeps status and code',
      400,
      openAIBody('bad temperature', 'invalid_value', 'temperature'),
      400,
      'invalid_value',
    ],
    [
      '404 keeps status and code',
      404,
      openAIBody('no such model', 'model_not_found'),
      404,
      'model_not_found',
    ],
    ['4xx without a code', 422, openAIBody('nope'), 422, 'upstream_error'],
    ['429 stays 429', 429, openAIBody('slow down', 'rate_limit_exceeded'), 429, 'upstream_rate_limited'],
    ['408 → 504', 408, 'Request Timeout', 504, 'upstream_timeout'],
    ['504 → 504', 504, '<html>gateway timeout</html>', 504, 'upstream_timeout'],
    ['500 → 502', 500, openAIBody('boom'), 502, 'upstream_error'],
    // Like the anthropic and gemini kinds: overloaded is a 503 the client may retry, not a 502.
    ['503 stays 503', 503, '', 503, 'upstream_overloaded'],
    // The upstream's code is not one of the gateway's: every provider's 503 reads alike (upstream-status.test.ts).
    ['503 with a code of its own', 503, openAIBody('busy', 'server_overloaded'), 503, 'upstream_overloaded'],
    [
      '401 → 502: the gateway key was refused, not the client',
      401,
      openAIBody('bad key', 'invalid_api_key'),
      502,
      'upstream_auth_failed',
    ],
    ['403 → 502', 403, openAIBody('forbidden'), 502, 'upstream_auth_failed'],
  ]
  for (const [name, status, body, wantStatus, wantCode] of cases) {
    test(name, () => {
      const err = openAIStyleError(status, body, 'up')
      expect([err.status, err.code]).toEqual([wantStatus, wantCode])
      expect(err.message).toContain("'up'")
      expect(validateError(err.toBody())).toBeNull()
    })
  }

  // OpenAI's own message ends in a full stop; the sentence after it read "provided.. The operator".
  test("the refused-credentials message adds its advice after the upstream's sentence, one full stop between", () => {
    const err = openAIStyleError(401, openAIBody('Incorrect API key provided.', 'invalid_api_key'), 'up')
    expect(err.message).toBe(
      "Upstream 'up' refused the gateway's credentials (401): Incorrect API key provided. The operator must check the provider's api_key.",
    )
    expect(openAIStyleError(403, openAIBody('forbidden'), 'up').message).toContain('forbidden. The operator')
  })

  test('keeps the provider message and param; reads other error shapes and plain text', () => {
    const err = openAIStyleError(
      400,
      openAIBody('temperature too high', 'invalid_value', 'temperature'),
      'up',
    )
    expect(err.message).toContain('temperature too high')
    expect(err.param).toBe('temperature')
    expect(openAIStyleError(400, '{"error":"model \\"x\\" not found"}', 'up').message).toContain(
      'model "x" not found',
    )
    expect(openAIStyleError(400, '{"object":"error","message":"vllm says no"}', 'up').message).toContain(
      'vllm says no',
    )
    expect(openAIStyleError(400, '{"detail":[{"msg":"field required"}]}', 'up').message).toContain(
      'field required',
    )
    expect(
      openAIStyleError(
        400,
        '[{"error":{"code":400,"message":"gemini says no","status":"INVALID_ARGUMENT"}}]',
        'up',
      ).code,
    ).toBe('invalid_argument')
    expect(openAIStyleError(400, 'plain words', 'up').message).toContain('plain words')
    expect(openAIStyleError(500, '', 'up').message).toContain('HTTP 500')
  })

  test('truncates long messages and redacts anything that looks like a credential', () => {
    const err = openAIStyleError(400, openAIBody('x'.repeat(2000)), 'up')
    expect(err.message.length).toBeLessThan(700)
    const leaky = [
      'sk-proj-abcdefghijklmnop1234',
      'gsk_abcdefghijklmnopqrstuv',
      'AIzaSyA1234567890abcdefghijklmnopqrstu',
      'Bearer eyJhbGciOi.payload.sig',
      'https://x.test/v1?key=SECRETSECRET&alt=sse',
      '0123456789abcdef0123456789abcdef0123',
    ]
    const msg = openAIStyleError(400, openAIBody(`seen: ${leaky.join(' ')}`), 'up').message
    for (const secret of [
      'abcdefghijklmnop1234',
      'abcdefghijklmnopqrstuv',
      'SyA1234567890',
      'eyJhbGciOi',
      'SECRETSECRET',
      '0123456789abcdef0123',
    ]) {
      expect(msg).not.toContain(secret)
    }
    // Ordinary identifiers survive.
    expect(
      sanitizeMessage('model meta-llama-3.1-70b-instruct-turbo and 123e4567-e89b-12d3-a456-426614174000'),
    ).toBe('model meta-llama-3.1-70b-instruct-turbo and 123e4567-e89b-12d3-a456-426614174000')
  })
})

describe('readJson', () => {
  test('parses the body; garbage → 502 upstream_invalid_response', async () => {
    expect(await readJson(new Response('{"a":1}'), callContext(provider))).toEqual({ a: 1 })
    const err = await readJson(new Response('<html>'), callContext(provider)).catch((e: unknown) => e)
    expect([(err as GatewayError).status, (err as GatewayError).code]).toEqual([
      502,
      'upstream_invalid_response',
    ])
  })

  test('a body that stalls → 504', async () => {
    const stalled = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"a":'))
      },
    })
    const err = await readJson(
      new Response(stalled),
      callContext(provider, { timeouts: { idleMs: 50 } }),
    ).catch((e: unknown) => e)
    expect((err as GatewayError).status).toBe(504)
  })

  test('multibyte text split across chunks survives', async () => {
    const all = new TextEncoder().encode('{"t":"héllo 👋"}')
    const pieces = Array.from(all, (b) => new Uint8Array([b]))
    expect(await readJson(new Response(bytes(...pieces)), callContext(provider))).toEqual({ t: 'héllo 👋' })
  })

  test('max_response_bytes: a body at the cap is read; past it → 502 upstream_response_too_large, body cancelled', async () => {
    const small = { ...provider, max_response_bytes: 20 }
    expect(await readJson(new Response(`{"a":"${'x'.repeat(12)}"}`), callContext(small))).toEqual({
      a: 'x'.repeat(12),
    })
    let cancelled = false
    let pulls = 0
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        pulls++
        c.enqueue(new TextEncoder().encode('{"a":"xxxxxxxx'))
      },
      cancel() {
        cancelled = true
      },
    })
    const err = await readJson(new Response(endless), callContext(small)).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 502, code: 'upstream_response_too_large' })
    for (let i = 0; i < 50 && !cancelled; i++) await Bun.sleep(1)
    expect(cancelled).toBe(true)
    expect(pulls).toBeLessThan(10)
  })

  test('a declared Content-Length past the cap fails before reading', async () => {
    let pulled = false
    const body = new ReadableStream<Uint8Array>({
      pull() {
        pulled = true
      },
    })
    const res = new Response(body, { headers: { 'content-length': String(64 * 1024 * 1024) } })
    const err = await readJson(res, callContext(provider)).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'upstream_response_too_large' })
    expect(pulled).toBe(false)
  })
})

describe('readText on a real upstream answer', () => {
  const enc = new TextEncoder()
  /** `/stall-declared`: a declared length and half of it; `/trickle`: chunked pieces 40 ms apart. */
  const upstream = () =>
    Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(req) {
        const path = new URL(req.url).pathname
        if (path === '/stall-declared') {
          const body = new ReadableStream<Uint8Array>({
            start(c) {
              c.enqueue(enc.encode('{"a":'))
            },
          })
          return new Response(body, { headers: { 'content-length': '10' } })
        }
        if (path === '/trickle') {
          const body = new ReadableStream<Uint8Array>({
            async start(c) {
              for (const piece of ['{"a":', '"b', 'c', 'd"', '}']) {
                c.enqueue(enc.encode(piece))
                await Bun.sleep(40)
              }
              c.close()
            },
          })
          return new Response(body)
        }
        if (path === '/gzip-bomb') {
          // 4.9 KB on the wire, 5 MB decoded.
          const body = Bun.gzipSync(new Uint8Array(5_000_000).fill(32))
          return new Response(body, { headers: { 'content-encoding': 'gzip' } })
        }
        return Response.json({ a: 'é'.repeat(1000) })
      },
    })
  const fetchFrom = (url: string, ctx: ReturnType<typeof callContext>) =>
    upstreamFetch(url, { method: 'GET' }, ctx, (status) => new GatewayError(status, 'x', 'refused'))

  test('a declared body is read whole; one that stalls → 504 upstream_timeout after min(idle, total)', async () => {
    using server = upstream()
    const ctx = callContext(provider, { timeouts: { idleMs: 100, totalMs: 5_000 } })
    expect(await readJson(await fetchFrom(`${server.url}ok`, ctx), ctx)).toEqual({ a: 'é'.repeat(1000) })
    const t0 = performance.now()
    const err = await readText(await fetchFrom(`${server.url}stall-declared`, ctx), ctx).catch((e) => e)
    expect(err).toMatchObject({ status: 504, code: 'upstream_timeout' })
    expect(performance.now() - t0).toBeLessThan(3_000)
  })

  test("with the pipeline's merged signal and one timer per request, a stalled declared body → 504 too", async () => {
    using server = upstream()
    const cancel = new AbortController()
    const ctx = {
      ...callContext(provider, { signal: cancel.signal, timeouts: { idleMs: 100, totalMs: 5_000 } }),
      cancel: (reason: GatewayError) => cancel.abort(reason),
      deadline: new Deadline(realScheduler),
    }
    const err = await readText(await fetchFrom(`${server.url}stall-declared`, ctx), ctx).catch((e) => e)
    expect(err).toMatchObject({ status: 504, code: 'upstream_timeout' })
  })

  test('an undeclared body: idle_ms bounds each piece, not the whole body; total_ms bounds it all', async () => {
    using server = upstream()
    const patient = callContext(provider, { timeouts: { idleMs: 1_000, totalMs: 5_000 } })
    // 5 pieces 40 ms apart: longer in all than a 150 ms idle timeout, never silent that long.
    const ctx = callContext(provider, { timeouts: { idleMs: 150, totalMs: 5_000 } })
    expect(await readText(await fetchFrom(`${server.url}trickle`, patient), ctx)).toBe('{"a":"bcd"}')
    const short = callContext(provider, { timeouts: { idleMs: 1_000, totalMs: 60 } })
    const err = await readText(await fetchFrom(`${server.url}trickle`, patient), short).catch((e) => e)
    expect(err).toMatchObject({ status: 504, code: 'upstream_timeout' })
  })

  test('a compressed body is held to max_response_bytes decoded, not by its declared length', async () => {
    using server = upstream()
    const small = { ...provider, max_response_bytes: 1_000_000 }
    const ctx = callContext(small)
    const err = await readText(await fetchFrom(`${server.url}gzip-bomb`, ctx), ctx).catch((e) => e)
    expect(err).toMatchObject({ status: 502, code: 'upstream_response_too_large' })
  })

  test('the client leaving during the body read → 499 client_closed_request', async () => {
    using server = upstream()
    const client = new AbortController()
    const ctx = callContext(provider, { signal: client.signal, timeouts: { idleMs: 5_000 } })
    const res = await fetchFrom(`${server.url}stall-declared`, ctx)
    setTimeout(() => client.abort(), 50)
    expect(await readText(res, ctx).catch((e) => e)).toMatchObject({ status: 499 })
  })
})

describe('signals', () => {
  test('mergeSignals aborts with the first reason', () => {
    const a = new AbortController()
    const b = new AbortController()
    const merged = mergeSignals(a.signal, undefined, b.signal)
    b.abort('because')
    expect(merged.aborted).toBe(true)
    expect(merged.reason).toBe('because')
    expect(mergeSignals(a.signal)).toBe(a.signal)
  })

  test('abortError: a GatewayError reason is kept, a timeout is 504, anything else 499', () => {
    const own = new GatewayError(504, 'upstream_timeout', 'x')
    expect(abortError(own)).toBe(own)
    expect(abortError(new DOMException('t', 'TimeoutError')).status).toBe(504)
    const closed = abortError(undefined)
    expect([closed.status, closed.code, closed.name]).toEqual([499, 'client_closed_request', 'AbortError'])
  })
})
