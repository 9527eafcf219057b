/**
 * Bad input over real HTTP (DESIGN §5): a reproducible corpus of malformed and mistyped bodies
 * gets 4xx answers in OpenAI's error shape — never a 5xx, never a crash — and nothing refused
 * reaches the upstream. Then the named cases: 415, 413 (declared and chunked), empty body,
 * unknown role, tool message without tool_call_id, wrong types.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type ChatBed, expectError, startChatBed, userMessage } from '../../../support/chat-bed.ts'
import { generateMalformedBodies } from '../../../support/malformed-bodies.ts'
import { validateError } from '../../../support/openai-schemas.ts'

const BODY_LIMIT = 256 * 1024
const SEED = 20_250_101
const COUNT = 1_200
/** Requests in flight at once: enough to overlap, few enough for a loaded 2-core machine. */
const CONCURRENCY = 6

let bed: ChatBed
beforeAll(async () => {
  bed = await startChatBed({ server: { body_limit_bytes: BODY_LIMIT } })
})
afterAll(() => bed.stop())

const url = () => `${bed.gw.url}/v1/chat/completions`

async function expectHealthy(): Promise<void> {
  expect((await fetch(`${bed.gw.url}/healthz`)).status).toBe(200)
  const res = await bed.post({ model: 'mock/gpt-4o-mini', messages: userMessage() })
  expect(res.status).toBe(200)
  expect(((await res.json()) as any).choices[0].message.content).toBe('Hello from the mock')
  expect(bed.gw.logs.filter((l) => l.includes('unhandled error'))).toEqual([])
}

describe(`${COUNT} generated malformed bodies (seed ${SEED})`, () => {
  test('every one gets a 4xx with a valid error body, or (if the mutation left it valid) a 200; never a 5xx', async () => {
    const bodies = generateMalformedBodies(SEED, COUNT, { model: 'mock/gpt-4o-mini' })
    const statuses = new Map<number, number>()
    const codes = new Map<string, number>()
    const failures: string[] = []
    let ok = 0
    bed.mock.reset()

    async function send(i: number): Promise<void> {
      const { body, contentType, mutation } = bodies[i]!
      const headers: Record<string, string> = { authorization: `Bearer ${bed.key}` }
      if (contentType !== undefined) headers['content-type'] = contentType
      let res: Response
      try {
        res = await fetch(url(), { method: 'POST', headers, body })
      } catch (err) {
        failures.push(`#${i} ${mutation}: connection failed: ${(err as Error).message}`)
        return
      }
      const text = await res.text() // SSE or JSON: read it all either way
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      if (res.status === 200) {
        ok++
        return
      }
      let problem: string | null = null
      if (res.status < 400 || res.status >= 500) problem = `status ${res.status}`
      else {
        try {
          const json = JSON.parse(text)
          if (validateError(json) !== null) problem = 'error body does not validate'
          else if (!json.error.message) problem = 'empty message'
          else codes.set(json.error.code, (codes.get(json.error.code) ?? 0) + 1)
        } catch {
          problem = 'error body is not JSON'
        }
      }
      if (problem) failures.push(`#${i} ${mutation}: ${problem}: ${text.slice(0, 300)}`)
    }

    let next = 0
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < bodies.length) await send(next++)
      }),
    )

    expect(failures).toEqual([])
    const clientErrors = [...statuses].filter(([s]) => s >= 400 && s < 500).reduce((n, [, c]) => n + c, 0)
    expect(clientErrors + ok).toBe(COUNT)
    expect(clientErrors).toBeGreaterThanOrEqual(1_000)
    // The corpus reached every stage over HTTP, 415 and 413 included.
    for (const code of [
      'invalid_json',
      'invalid_type',
      'invalid_value',
      'missing_required_parameter',
      'unsupported_media_type',
      'request_too_large',
    ]) {
      expect({ code, seen: (codes.get(code) ?? 0) > 0 }).toEqual({ code, seen: true })
    }
    // Only what the gateway accepted went upstream.
    expect(bed.mock.stats.requests).toBe(ok)
    await expectHealthy()
  }, 60_000)

  test('the corpus is reproducible: the same seed gives the same bodies', () => {
    expect(generateMalformedBodies(SEED, 20, { model: 'mock/gpt-4o-mini' })).toEqual(
      generateMalformedBodies(SEED, 20, { model: 'mock/gpt-4o-mini' }),
    )
  })
})

describe('named bad inputs', () => {
  const valid = JSON.stringify({ model: 'mock/gpt-4o-mini', messages: userMessage() })

  test('wrong content type → 415 unsupported_media_type', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const err = await expectError(
        await bed.post(valid, { 'content-type': type }),
        415,
        'unsupported_media_type',
      )
      expect(err.error.message).toContain('application/json')
    }
  })

  test('oversize body → 413 request_too_large, declared or chunked', async () => {
    const big = JSON.stringify({ model: 'mock/gpt-4o-mini', messages: userMessage('x'.repeat(BODY_LIMIT)) })
    const err = await expectError(await bed.post(big), 413, 'request_too_large')
    expect(err.error.message).toContain(String(BODY_LIMIT))

    const bytes = new TextEncoder().encode(big)
    let at = 0
    const chunked = new ReadableStream<Uint8Array>({
      pull(c) {
        if (at >= bytes.length) return c.close()
        c.enqueue(bytes.subarray(at, at + 16_384))
        at += 16_384
      },
    })
    const res = await fetch(url(), {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.key}`, 'content-type': 'application/json' },
      body: chunked,
    })
    await expectError(res, 413, 'request_too_large')
    // Just under the limit is fine.
    const fits = JSON.stringify({
      model: 'mock/gpt-4o-mini',
      messages: userMessage('x'.repeat(BODY_LIMIT - 200)),
    })
    expect((await bed.post(fits)).status).toBe(200)
  })

  test("a body far over the limit still gets the OpenAI-shaped 413 with a request id, not Bun's bare one", async () => {
    // Bun's own maxRequestBodySize (once 2 × limit + 64 KiB) answered before the app with no body.
    for (const size of [3 * BODY_LIMIT, 40 * BODY_LIMIT]) {
      const res = await bed.post(`{"model":"mock/gpt-4o-mini","messages":[],"pad":"${'x'.repeat(size)}"}`)
      await expectError(res, 413, 'request_too_large')
    }
    await expectHealthy()
  })

  test('empty body → 400 invalid_json saying it is empty', async () => {
    const err = await expectError(await bed.post(''), 400, 'invalid_json')
    expect(err.error.message).toContain('empty')
  })

  test('unknown role → 400 naming messages[i].role', async () => {
    const body = {
      model: 'mock/gpt-4o-mini',
      messages: [...userMessage(), { role: 'robot', content: 'beep' }],
    }
    const res = await bed.post(body)
    expect(res.status).toBe(400)
    const err = (await res.json()) as any
    expect(validateError(err)).toBeNull()
    expect(err.error.param).toBe('messages[1].role')
    expect(err.error.message).toContain('messages[1].role')
    expect(err.error.message).toContain('robot')
  })

  test('tool message without tool_call_id → 400 naming messages[i].tool_call_id', async () => {
    const body = {
      model: 'mock/gpt-4o-mini',
      messages: [...userMessage(), { role: 'tool', content: '18C' }],
    }
    const res = await bed.post(body)
    expect(res.status).toBe(400)
    const err = (await res.json()) as any
    expect(validateError(err)).toBeNull()
    expect(err.error.param).toBe('messages[1].tool_call_id')
    expect(err.error.message).toContain('tool_call_id')
  })

  test('wrong types and missing fields → 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ messages: userMessage() }, 'model'],
      [{ model: 'mock/gpt-4o-mini' }, 'messages'],
      [{ model: 'mock/gpt-4o-mini', messages: 'Hello' }, 'messages'],
      [{ model: 'mock/gpt-4o-mini', messages: userMessage(), temperature: 'hot' }, 'temperature'],
      [{ model: 'mock/gpt-4o-mini', messages: userMessage(), max_tokens: 1e9 }, 'max_tokens'],
      [{ model: 'mock/gpt-4o-mini', messages: userMessage(), stream: 'yes' }, 'stream'],
      [{ model: 42, messages: userMessage() }, 'model'],
    ]
    for (const [body, param] of cases) {
      const res = await bed.post(body)
      expect({ param, status: res.status }).toEqual({ param, status: 400 })
      const err = (await res.json()) as any
      expect(validateError(err)).toBeNull()
      expect(err.error.param).toBe(param)
    }
    await expectHealthy()
  })
})
