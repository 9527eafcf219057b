/**
 * Upstream faults through the real server (DESIGN §4, §5): each becomes the documented HTTP error
 * (status held until the upstream's first event) or, once streaming, an error event with no
 * [DONE]; the failure is logged with its request id, the provider key never leaks, and the
 * gateway answers the next request normally.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  type ChatBed,
  expectError,
  readSSE,
  startChatBed,
  UPSTREAM_KEY,
  userMessage,
  waitFor,
} from '../../../support/chat-bed.ts'
import { validateError } from '../../../support/openai-schemas.ts'

let bed: ChatBed
beforeAll(async () => {
  bed = await startChatBed()
})
afterAll(() => bed.stop())

const post = (model: string, stream: boolean) => bed.post({ model, messages: userMessage(), stream })

/** The gateway still serves a normal request, streamed and not. */
async function expectHealthy(): Promise<void> {
  const plain = await post('mock/gpt-4o-mini', false)
  expect(plain.status).toBe(200)
  expect(((await plain.json()) as any).choices[0].message.content).toBe('Hello from the mock')
  const streamed = await readSSE(await post('mock/gpt-4o-mini', true))
  expect(streamed.done).toBe(true)
  expect((await fetch(`${bed.gw.url}/healthz`)).status).toBe(200)
}

/** A 5xx is logged with the request id the client saw. */
function expectLogged(rid: string | null, code: string): void {
  expect(rid).toBeTruthy()
  const line = bed.gw.logs.find((l) => l.includes(rid!) && l.includes(code))
  expect(line).toBeDefined()
  expect(line).not.toContain(UPSTREAM_KEY)
}

type HttpCase = [name: string, model: string, status: number, code: string]

const HTTP_FAULTS: HttpCase[] = [
  ['upstream 500', 'mock/fault-500', 502, 'upstream_error'],
  ['upstream 429', 'mock/fault-429', 429, 'upstream_rate_limited'],
  ['upstream 400 (echoing the key)', 'mock/fault-400', 400, 'invalid_value'],
  ['refused connection', 'dead/gpt-4o-mini', 502, 'upstream_unreachable'],
  ['no answer within first_byte_ms', 'mockt/hang', 504, 'upstream_timeout'],
  ['invalid JSON', 'mock/fault-invalid-json', 502, 'upstream_invalid_response'],
]

describe('faults before the first byte are real HTTP errors, streaming or not', () => {
  for (const [name, model, status, code] of HTTP_FAULTS) {
    for (const stream of [false, true]) {
      test(`${name}${stream ? ', stream' : ''} → ${status} ${code}`, async () => {
        const res = await post(model, stream)
        const rid = res.headers.get('x-request-id')
        const body = await expectError(res, status, code)
        expect(body.error.message).not.toContain('upstream-secret')
        if (status === 429) expect(res.headers.get('retry-after')).toBe('7')
        if (status >= 500) expectLogged(rid, code)
        await expectHealthy()
      })
    }
  }

  test('a timed-out upstream request is cancelled, not left running', async () => {
    bed.mock.reset()
    await expectError(await post('mockt/hang', false), 504, 'upstream_timeout')
    await waitFor(() => bed.mock.stats.aborted === 1, 2_000)
  })
})

type StreamCase = [name: string, model: string, code: string, nonStream: [number, string]]

const STREAM_FAULTS: StreamCase[] = [
  [
    'stream cut halfway',
    'mock/fault-cut-stream',
    'upstream_stream_interrupted',
    [502, 'upstream_invalid_response'],
  ],
  ['error event mid-stream', 'mock/fault-error-event', 'upstream_error', [502, 'upstream_error']],
  ['silence past idle_ms mid-stream', 'mocks/slow-stream-2000ms', 'upstream_timeout', [200, '']],
]

describe('faults after the first byte end the stream with an error event and no [DONE]', () => {
  for (const [name, model, code, [status, plainCode]] of STREAM_FAULTS) {
    test(`${name} → data: {"error": {code: ${code}}}`, async () => {
      const res = await post(model, true)
      expect(res.status).toBe(200)
      const rid = res.headers.get('x-request-id')
      const s = await readSSE(res)
      expect(s.text).not.toContain(UPSTREAM_KEY)
      expect(s.done).toBe(false)
      const last = s.events.at(-1) as { error?: { code: string; message: string } }
      expect(last.error?.code).toBe(code)
      expect(validateError(last)).toBeNull()
      // The chunks before the failure were delivered as they came.
      expect(s.events.length).toBeGreaterThan(1)
      expect(s.events.slice(0, -1).every((e) => Array.isArray(e.choices))).toBe(true)
      expectLogged(rid, code)
      await expectHealthy()

      if (status === 200) return // this upstream answers a non-streamed request normally
      const plain = await post(model, false)
      expect(plain.status).toBe(status)
      await expectError(plain, status, plainCode)
    })
  }
})

describe('the provider key never reaches a client', () => {
  test('it was sent upstream, and appears in no fault response', async () => {
    bed.mock.reset()
    const res = await post('mock/fault-400', false)
    expect(bed.mock.stats.lastHeaders.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
    const text = await res.text()
    expect(text).toContain('rejected by the mock') // the upstream message itself is kept
    expect(text).not.toContain(UPSTREAM_KEY)
    expect(text).not.toContain('upstream-secret')
    expect(bed.gw.logs.join('\n')).not.toContain(UPSTREAM_KEY)
  })
})
