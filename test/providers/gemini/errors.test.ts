import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ChatRequest } from '../../../src/operations/chat.ts'
import { createGeminiAdapter } from '../../../src/providers/gemini/index.ts'
import { mapGeminiError, mapGeminiHttpError } from '../../../src/providers/gemini/map-gemini-error.ts'
import { GatewayError } from '../../../src/util/errors.ts'
import { type FakeUpstream, type GeminiFixture, startFakeGemini } from '../../support/fake-gemini.ts'
import { validateChunk, validateError } from '../../support/openai-schemas.ts'
import { API_KEY, assemble, callContext, drain, geminiProvider, planItems } from './helpers.ts'

let fake: FakeUpstream<GeminiFixture>
beforeAll(async () => {
  fake = await startFakeGemini({ apiKey: API_KEY })
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

describe('Gemini HTTP error bodies', () => {
  test.each([
    ['invalid-argument', 400, 'upstream_invalid_request', 'Name cannot be empty'],
    ['api-key-invalid', 502, 'upstream_auth_failed', 'api_key'],
    ['permission-denied', 502, 'upstream_auth_failed', 'api_key'],
    ['not-found', 502, 'upstream_not_found', 'gemini-does-not-exist'],
    ['resource-exhausted', 429, 'upstream_rate_limited', 'exceeded your current quota'],
    ['internal', 502, 'upstream_error', 'internal error'],
    ['unavailable', 503, 'upstream_overloaded', 'overloaded'],
  ] as const)('%s → %d %s, for complete() and stream()', async (fixture, status, code, text) => {
    const provider = geminiProvider(fake.url)
    const adapter = createGeminiAdapter(provider)
    for (const call of [
      () => adapter.complete(request(fixture), callContext(provider)),
      () => adapter.stream(request(fixture), callContext(provider)),
    ]) {
      const err = await failure(call)
      expect([err.status, err.code]).toEqual([status, code])
      expect(err.message).toContain(text)
    }
  })

  test('a wrong key is the operator’s problem: 502, no upstream wording, no key', async () => {
    const provider = geminiProvider(fake.url, { api_key: 'AIzaSyWRONG-wrongwrongwrongwrong' })
    const err = await failure(() =>
      createGeminiAdapter(provider).complete(request('text'), callContext(provider)),
    )
    expect([err.status, err.code]).toEqual([502, 'upstream_auth_failed'])
    expect(err.message).not.toContain('API key not valid')
    expect(err.message).not.toContain('AIzaSyWRONG')
    expect(err.message).toContain("provider 'gemini'")
  })

  test('the configured key and key-shaped strings are removed from relayed messages', () => {
    const provider = geminiProvider('http://127.0.0.1:1')
    const body = JSON.stringify({
      error: {
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: `bad ${API_KEY} and AIzaSyOTHERKEY0123456789 and api_key=abcdefghijkl99`,
      },
    })
    const err = mapGeminiHttpError(400, body, provider)
    expect(err.status).toBe(400)
    expect(err.message).not.toContain(API_KEY)
    expect(err.message).not.toContain('AIzaSyOTHER')
    expect(err.message).not.toContain('abcdefghijkl99')
  })

  test('array-wrapped and non-JSON bodies', () => {
    const provider = geminiProvider('http://127.0.0.1:1')
    const wrapped = JSON.stringify([
      { error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' } },
    ])
    expect(mapGeminiHttpError(429, wrapped, provider)).toMatchObject({
      status: 429,
      code: 'upstream_rate_limited',
    })
    expect(mapGeminiHttpError(503, '<html>', provider)).toMatchObject({
      status: 503,
      code: 'upstream_overloaded',
    })
    expect(mapGeminiHttpError(504, '', provider)).toMatchObject({ status: 504, code: 'upstream_timeout' })
    expect(mapGeminiHttpError(418, '', provider)).toMatchObject({
      status: 400,
      code: 'upstream_invalid_request',
    })
  })

  test.each([
    ['FAILED_PRECONDITION', 502, 'upstream_precondition_failed'],
    ['UNAUTHENTICATED', 502, 'upstream_auth_failed'],
    ['DEADLINE_EXCEEDED', 504, 'upstream_timeout'],
    ['SOMETHING_NEW', 502, 'upstream_error'],
  ])('status %s → %d %s', (status, http, code) => {
    const err = mapGeminiError({ error: { code: 400, message: 'x', status } }, geminiProvider('http://x'))
    expect([err.status, err.code]).toEqual([http, code])
  })
})

describe('Gemini stream errors', () => {
  test('an error object mid-stream errors the stream after the text so far (UNAVAILABLE → 503)', async () => {
    const provider = geminiProvider(fake.url)
    const { chunks, error } = await drain(
      planItems(await createGeminiAdapter(provider).stream(request('stream-error'), callContext(provider))),
    )
    for (const chunk of chunks) expect(validateChunk(chunk)).toBeNull()
    expect(assemble(chunks).content).toBe('Once upon')
    expect(chunks.some((c) => c.choices[0]?.finish_reason)).toBe(false)
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ status: 503, code: 'upstream_overloaded' })
  })

  test('a stream that ends without a finishReason → 502 upstream_stream_interrupted', async () => {
    const provider = geminiProvider(fake.url)
    const { chunks, error } = await drain(
      planItems(await createGeminiAdapter(provider).stream(request('truncated'), callContext(provider))),
    )
    expect(assemble(chunks).content).toBe('Once upon')
    expect(error).toMatchObject({ status: 502, code: 'upstream_stream_interrupted' })
  })

  test('an unreachable upstream → 502 upstream_unreachable', async () => {
    const provider = geminiProvider('http://127.0.0.1:9')
    const err = await failure(() =>
      createGeminiAdapter(provider).complete(request('text'), callContext(provider)),
    )
    expect([err.status, err.code]).toEqual([502, 'upstream_unreachable'])
  })
})
