import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ChatRequest } from '../../../src/operations/chat.ts'
import { createAnthropicAdapter } from '../../../src/providers/anthropic/index.ts'
import {
  mapAnthropicHttpError,
  mapAnthropicStreamError,
} from '../../../src/providers/anthropic/map-anthropic-error.ts'
import { GatewayError } from '../../../src/util/errors.ts'
import { type AnthropicFixture, type FakeUpstream, startFakeAnthropic } from '../../support/fake-anthropic.ts'
import { validateChunk, validateError } from '../../support/openai-schemas.ts'
import { API_KEY, anthropicProvider, assemble, callContext, drain, planItems } from './helpers.ts'

let fake: FakeUpstream<AnthropicFixture>
beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: API_KEY })
})
afterAll(() => fake.stop())

const request = (model: string): ChatRequest => ({
  model,
  messages: [{ role: 'user', content: 'Hi' }],
  max_tokens: 64,
})

async function failure(run: () => Promise<unknown>): Promise<GatewayError> {
  try {
    await run()
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError)
    const gw = err as GatewayError
    expect(validateError(gw.toBody())).toBeNull()
    expect(gw.message).not.toContain(API_KEY)
    return gw
  }
  throw new Error('expected the call to fail')
}

describe('Anthropic HTTP error bodies', () => {
  test.each([
    ['invalid-request', 400, 'upstream_invalid_request', 'image exceeds 5 MB maximum'],
    ['not-found', 502, 'upstream_not_found', 'claude-does-not-exist'],
    ['rate-limit', 429, 'upstream_rate_limited', '50 requests per minute'],
    ['api-error', 502, 'upstream_error', 'Internal server error'],
    ['overloaded', 503, 'upstream_overloaded', 'Overloaded'],
    ['authentication', 502, 'upstream_auth_failed', 'api_key'],
    ['permission', 502, 'upstream_permission_denied', 'api_key'],
  ] as const)('%s → %d %s, for complete() and stream()', async (fixture, status, code, text) => {
    const provider = anthropicProvider(fake.url)
    const adapter = createAnthropicAdapter(provider)
    for (const call of [
      () => adapter.complete(request(fixture), callContext(provider)),
      () => adapter.stream(request(fixture), callContext(provider)),
    ]) {
      const err = await failure(call)
      expect([err.status, err.code]).toEqual([status, code])
      expect(err.message).toContain(text)
    }
  })

  test('a 429 keeps the upstream retry-after', async () => {
    const provider = anthropicProvider(fake.url)
    const err = await failure(() =>
      createAnthropicAdapter(provider).complete(request('rate-limit'), callContext(provider)),
    )
    expect(err.headers).toEqual({ 'retry-after': '7' })
  })

  test('a wrong key is the operator’s problem: 502, no upstream wording, no key', async () => {
    const provider = anthropicProvider(fake.url, { api_key: 'sk-ant-api03-WRONG-wrongwrongwrong' })
    const err = await failure(() =>
      createAnthropicAdapter(provider).complete(request('text'), callContext(provider)),
    )
    expect([err.status, err.code]).toEqual([502, 'upstream_auth_failed'])
    expect(err.message).not.toContain('x-api-key')
    expect(err.message).not.toContain('sk-ant-api03-WRONG')
    expect(err.message).toContain("provider 'anthropic'")
  })

  test('the configured key and key-shaped strings are removed from relayed messages', () => {
    const provider = anthropicProvider('http://127.0.0.1:1')
    const body = JSON.stringify({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: `bad header ${API_KEY}; also sk-ant-api03-ZZZZZZZZZZZZ and x-api-key: abcdefghijklmnop1234`,
      },
    })
    const err = mapAnthropicHttpError(400, body, provider)
    expect(err.status).toBe(400)
    expect(err.message).not.toContain(API_KEY)
    expect(err.message).not.toContain('sk-ant-api03-ZZZZ')
    expect(err.message).not.toContain('abcdefghijklmnop1234')
    expect(err.message).toContain('bad header')
  })

  test('bodies that are not Anthropic errors map by HTTP status', () => {
    const provider = anthropicProvider('http://127.0.0.1:1')
    expect(mapAnthropicHttpError(529, '<html>busy</html>', provider).status).toBe(503)
    expect(mapAnthropicHttpError(504, '', provider).code).toBe('upstream_timeout')
    expect(mapAnthropicHttpError(418, '{}', provider).status).toBe(400)
    // As at every provider (upstream-status.test.ts): a 503 is overloaded, a 408 a timeout.
    expect(mapAnthropicHttpError(503, 'nope', provider)).toMatchObject({
      status: 503,
      code: 'upstream_overloaded',
    })
    expect(mapAnthropicHttpError(408, '', provider).code).toBe('upstream_timeout')
  })
})

describe('Anthropic stream errors', () => {
  test('a mid-stream error event errors the stream after the text so far (overloaded → 503)', async () => {
    const provider = anthropicProvider(fake.url)
    const { chunks, error } = await drain(
      planItems(
        await createAnthropicAdapter(provider).stream(request('stream-error'), callContext(provider)),
      ),
    )
    for (const chunk of chunks) expect(validateChunk(chunk)).toBeNull()
    expect(assemble(chunks).content).toBe('Once upon')
    expect(chunks.some((c) => c.choices[0]?.finish_reason)).toBe(false)
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ status: 503, code: 'upstream_overloaded' })
  })

  test('a stream that ends before message_stop → 502 upstream_stream_interrupted', async () => {
    const provider = anthropicProvider(fake.url)
    const { chunks, error } = await drain(
      planItems(await createAnthropicAdapter(provider).stream(request('truncated'), callContext(provider))),
    )
    expect(assemble(chunks).content).toBe('Once upon')
    expect(error).toMatchObject({ status: 502, code: 'upstream_stream_interrupted' })
  })

  test.each([
    ['rate_limit_error', 429, 'upstream_rate_limited'],
    ['invalid_request_error', 400, 'upstream_invalid_request'],
    ['authentication_error', 502, 'upstream_auth_failed'],
    ['api_error', 502, 'upstream_error'],
    ['overloaded_error', 503, 'upstream_overloaded'],
    ['something_new', 502, 'upstream_error'],
  ])('error event %s → %d %s', (type, status, code) => {
    const err = mapAnthropicStreamError(
      { type: 'error', error: { type, message: 'boom' } },
      anthropicProvider('http://x'),
    )
    expect([err.status, err.code]).toEqual([status, code])
  })

  test('an unreachable upstream → 502 upstream_unreachable', async () => {
    const provider = anthropicProvider('http://127.0.0.1:9')
    const err = await failure(() =>
      createAnthropicAdapter(provider).stream(request('text'), callContext(provider)),
    )
    expect([err.status, err.code]).toEqual([502, 'upstream_unreachable'])
  })
})
