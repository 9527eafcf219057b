import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../../../src/util/errors.ts'
import { planItems } from '../helpers.ts'
import { API_KEY, failure, openAITestbed, request, waitFor, withOwnMock } from './setup.ts'

const bed = openAITestbed()
const { provider, adapterCall, streamOf } = bed

describe('openai adapter, upstream faults', () => {
  test('500 → 502 upstream_error with the provider message', async () => {
    const { adapter, ctx } = adapterCall()
    const err = await failure(adapter.complete(request('fault-500'), ctx))
    expect([err.status, err.code]).toEqual([502, 'upstream_error'])
    expect(err.message).toContain('The server had an error')
    const streamErr = await failure(adapter.stream(request('fault-500'), ctx))
    expect([streamErr.status, streamErr.code]).toEqual([502, 'upstream_error'])
  })

  test('429 → 429 upstream_rate_limited, keeping the upstream retry-after', async () => {
    const { adapter, ctx } = adapterCall()
    const err = await failure(adapter.stream(request('fault-429'), ctx))
    expect([err.status, err.code]).toEqual([429, 'upstream_rate_limited'])
    expect(err.headers?.['retry-after']).toBe('7')
  })

  test('400 keeps status, code and param; the API key in the upstream message is redacted', async () => {
    const { adapter, ctx } = adapterCall()
    const err = await failure(adapter.complete(request('fault-400'), ctx))
    expect([err.status, err.code, err.param]).toEqual([400, 'invalid_value', 'messages'])
    expect(err.message).toContain('rejected by the mock')
    expect(err.message).not.toContain(API_KEY)
    expect(err.message).not.toContain(API_KEY.slice(8))
  })

  test('a key that looks like no known secret is still removed from messages', async () => {
    const p = provider({ api_key: 'plainkey42' })
    const { adapter, ctx } = adapterCall({ provider: p })
    const err = await failure(adapter.complete(request('fault-400'), ctx))
    expect(bed.mock.stats.lastHeaders.authorization).toBe('Bearer plainkey42')
    expect(err.message).not.toContain('plainkey42')
  })

  test('garbage instead of JSON → 502 upstream_invalid_response (both modes)', async () => {
    const { adapter, ctx } = adapterCall()
    const err = await failure(adapter.complete(request('fault-invalid-json'), ctx))
    expect([err.status, err.code]).toEqual([502, 'upstream_invalid_response'])
    const { error } = await streamOf('fault-invalid-json')
    expect(error).toBeInstanceOf(GatewayError)
    expect([(error as GatewayError).status, (error as GatewayError).code]).toEqual([
      502,
      'upstream_invalid_response',
    ])
  })

  test('a stream cut after two chunks → those chunks, then 502 upstream_stream_interrupted', async () => {
    const { chunks, error } = await streamOf('fault-cut-stream')
    expect(chunks.length).toBe(2)
    expect(error).toBeInstanceOf(GatewayError)
    expect([(error as GatewayError).status, (error as GatewayError).code]).toEqual([
      502,
      'upstream_stream_interrupted',
    ])
    const { adapter, ctx } = adapterCall()
    const err = await failure(adapter.complete(request('fault-cut-stream'), ctx))
    expect([err.status, err.code]).toEqual([502, 'upstream_invalid_response'])
  })

  test('an error event mid-stream → 502 with the provider message; a 200 error body too', async () => {
    const { chunks, error } = await streamOf('fault-error-event')
    expect(chunks.length).toBe(2)
    expect(error).toBeInstanceOf(GatewayError)
    expect((error as GatewayError).status).toBe(502)
    expect((error as GatewayError).message).toContain('The server had an error')
    const { adapter, ctx } = adapterCall()
    const err = await failure(adapter.complete(request('fault-error-event'), ctx))
    expect(err.status).toBe(502)
    expect(err.message).toContain('The server had an error')
  })

  test('headers later than firstByteMs → 504 upstream_timeout, and the upstream request is aborted', async () => {
    await withOwnMock(async (own, p) => {
      const { adapter, ctx } = adapterCall({ provider: p, timeouts: { firstByteMs: 100 } })
      const t0 = performance.now()
      // Headers at 10 s: a healthy timeout fires at ~0.1 s, a loaded machine stretches it, not to 5 s.
      const err = await failure(adapter.stream(request('slow-headers-10000ms'), ctx))
      expect([err.status, err.code]).toEqual([504, 'upstream_timeout'])
      expect(performance.now() - t0).toBeLessThan(5_000)
      await waitFor(() => own.stats.aborted === 1)
    })
  })

  test('a silent stream → 504 upstream_timeout after idleMs, once the headers have arrived', async () => {
    const t0 = performance.now()
    // The first chunk at 10 s: a healthy timeout fires at ~0.15 s, a loaded machine stretches it,
    // not to 5 s.
    const { chunks, error } = await streamOf('slow-first-10000ms', {}, { idleMs: 150 })
    expect(chunks).toEqual([])
    expect([(error as GatewayError).status, (error as GatewayError).code]).toEqual([504, 'upstream_timeout'])
    expect(performance.now() - t0).toBeLessThan(5_000)
    const { adapter, ctx } = adapterCall({ timeouts: { idleMs: 150 } })
    const err = await failure(adapter.complete(request('slow-first-10000ms'), ctx))
    expect([err.status, err.code]).toEqual([504, 'upstream_timeout'])
  })

  test('a stream that outlasts totalMs → 504 upstream_timeout even while chunks keep coming', async () => {
    const { chunks, error } = await streamOf('slow-stream-100ms', {}, { totalMs: 350, idleMs: 5000 })
    expect(chunks.length).toBeGreaterThan(0)
    expect(chunks.length).toBeLessThan(6)
    expect([(error as GatewayError).status, (error as GatewayError).code]).toEqual([504, 'upstream_timeout'])
  })

  test('refused connection → 502 upstream_unreachable naming neither the address nor the key', async () => {
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
    const port = closed.port
    await closed.stop(true)
    const p = provider({ base_url: `http://127.0.0.1:${port}/v1?key=${API_KEY}` })
    const { adapter, ctx } = adapterCall({ provider: p })
    const err = await failure(adapter.complete(request(), ctx))
    expect([err.status, err.code]).toEqual([502, 'upstream_unreachable'])
    expect(err.message).not.toContain('127.0.0.1')
    expect(err.message).not.toContain(String(port))
    expect(err.message).not.toContain(API_KEY)
    // The log gets the address (never the key) through `detail`.
    expect(err.detail).toContain(`127.0.0.1:${port}`)
    expect(err.detail).not.toContain(API_KEY)
  })
})

describe('openai adapter, cancellation', () => {
  test('cancelling the returned stream aborts the upstream request', async () => {
    await withOwnMock(async (own, p) => {
      const { adapter, ctx } = adapterCall({ provider: p })
      const reader = planItems(await adapter.stream(request('slow-stream-200ms'), ctx)).getReader()
      expect((await reader.read()).done).toBe(false)
      expect(own.stats.aborted).toBe(0)
      await reader.cancel()
      await waitFor(() => own.stats.aborted === 1)
    })
  })

  test('a client abort before the headers → 499 client_closed_request, upstream aborted', async () => {
    await withOwnMock(async (own, p) => {
      const client = new AbortController()
      const { adapter, ctx } = adapterCall({ provider: p, signal: client.signal })
      setTimeout(() => client.abort(), 50)
      const err = await failure(adapter.stream(request('hang'), ctx))
      expect([err.status, err.code, err.name]).toEqual([499, 'client_closed_request', 'AbortError'])
      await waitFor(() => own.stats.aborted === 1)
    })
  })

  test('a client abort mid-stream errors the stream with 499 and aborts the upstream', async () => {
    await withOwnMock(async (own, p) => {
      const client = new AbortController()
      const { adapter, ctx } = adapterCall({ provider: p, signal: client.signal })
      const reader = planItems(await adapter.stream(request('slow-stream-100ms'), ctx)).getReader()
      await reader.read()
      client.abort()
      const err = await reader.read().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(GatewayError)
      expect((err as GatewayError).status).toBe(499)
      await waitFor(() => own.stats.aborted === 1)
    })
  })
})
