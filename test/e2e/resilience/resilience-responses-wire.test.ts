/**
 * The attempt loop on the Responses pass-through (`wire: responses`, DESIGN §10), through the real
 * gateway and the fault upstream speaking OpenAI's Responses wire: the status and the first bytes
 * are held until the first content-bearing event, as on chat and Messages, so an upstream that
 * fails after `response.created` … `content_part.added` but before any content — an in-band
 * `error` / `response.failed` (the recorded out-of-quota stream), a cut, a stall — is retried or
 * failed over without the client seeing any of it. The in-band error is classified by its code
 * (`insufficient_quota`: the key rests). With nowhere left to go, the client gets an HTTP error,
 * as chat pass-through gives for the same failures; after content nothing changed.
 *
 * `oa` speaks Responses (one key, `retry.attempts` 2); `oa/fb2` falls back to `oc/plain` (chat
 * wire, translated), `oa/solo` has no fallback.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { beforeEach } from '../../support/hooks.ts'
import { readStream } from '../../support/read-stream.ts'
import { FAST, type ResilienceBed, startResilienceBed, TIGHT } from '../../support/resilience-bed.ts'
import { readResponsesStream } from '../../support/responses-bed.ts'

const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 4096,
  features: ['streaming', 'system_messages'],
  ...extra,
})

let bed: ResilienceBed
beforeAll(async () => {
  bed = await startResilienceBed({
    providers: (url) => [
      {
        prefix: 'oa',
        kind: 'openai',
        wire: 'responses',
        base_url: `${url}/v1`,
        api_key: 'sk-oa-0001',
        ...FAST,
        // A rest long enough to be seen by the next request; a circuit no test here opens.
        circuit: { failures: 10, cooldown_s: 60 },
        models: [model('fb2', { fallbacks: ['oc/plain'] }), model('solo')],
      },
      // oa's twin with 400 ms timeouts, for the test that stalls fb2 (oa's healthy answers keep FAST's).
      {
        prefix: 'ot',
        kind: 'openai',
        wire: 'responses',
        base_url: `${url}/v1`,
        api_key: 'sk-oa-0001',
        ...FAST,
        timeouts: TIGHT,
        models: [model('fb2', { fallbacks: ['oc/plain'] })],
      },
      {
        prefix: 'oc',
        kind: 'openai',
        base_url: `${url}/v1`,
        api_key: 'sk-oc-0002',
        ...FAST,
        models: [model('plain')],
      },
    ],
  })
})
afterAll(() => bed.stop())
beforeEach(() => bed.reset())

/** What the failed attempts sent and the gateway would say of them: none of it may reach the client. */
const FAILED_ATTEMPT = [
  'insufficient_quota',
  'exceeded your current quota',
  'resp_sanitized_streaming',
  '"oa/',
  '"ot/',
]

/**
 * The client's stream is the fallback's whole answer, one Responses stream (valid, numbered from
 * 0, one `response.created`), and holds nothing of the failed attempts.
 */
async function expectFallbackAnswer(res: Response, attempts: number): Promise<void> {
  expect(res.status).toBe(200)
  expect(res.headers.get('x-switchyard-attempts')).toBe(String(attempts))
  const body = await res.text()
  for (const trace of FAILED_ATTEMPT) expect(body).not.toContain(trace)
  const events = await readResponsesStream(new Response(body, { headers: res.headers }))
  const types = events.map((e) => e.event)
  expect(types.filter((t) => t === 'response.created')).toHaveLength(1)
  expect(types).not.toContain('error')
  expect(types).not.toContain('response.failed')
  expect(readStream('responses', body)).toMatchObject({
    text: bed.up.answer(),
    complete: true,
    error: null,
    model: 'oc/plain',
  })
}

describe('before content: retried or failed over unseen', () => {
  test('(a) an in-band insufficient_quota (error, response.failed) → the fallback answers; the key rests', async () => {
    bed.up.script({ model: 'fb2' }, 'quota_in_stream')
    const res = await bed.post('responses', 'oa/fb2', { stream: true })
    const rid = res.headers.get('x-request-id')
    await expectFallbackAnswer(res, 2)
    // A credential failure: not retried on the same key, straight to the fallback.
    expect(bed.up.attempts().map((a) => [a.wire, a.model])).toEqual([
      ['responses', 'fb2'],
      ['chat', 'plain'],
    ])
    const row = (await bed.requests()).find((x: any) => x.request_id === rid)
    expect(row).toMatchObject({ status: 200, attempts: 2, answered_by: 'oc/plain' })
    // The key rests circuit.cooldown_s: the next request goes to the fallback without asking it.
    const next = await bed.post('responses', 'oa/fb2', { stream: true })
    await expectFallbackAnswer(next, 1)
    expect(bed.up.attempts({ model: 'fb2' })).toHaveLength(1)
  })

  test('(b) a cut after response.created … content_part.added, every time → retried, then the fallback answers', async () => {
    bed.up.script({ model: 'fb2' }, { fault: 'cut', after: 0 })
    const res = await bed.post('responses', 'oa/fb2', { stream: true })
    // The first try and retry.attempts (2) on oa/fb2, then oc/plain.
    await expectFallbackAnswer(res, 4)
    expect(bed.up.attempts().map((a) => a.model)).toEqual(['fb2', 'fb2', 'fb2', 'plain'])
  })

  test('(c) a stall after response.created … past first_token_ms → the fallback answers, the stalled one let go', async () => {
    bed.up.script({ model: 'fb2' }, { fault: 'stall', after: 0 })
    const t0 = performance.now()
    const res = await bed.post('responses', 'ot/fb2', { stream: true })
    await expectFallbackAnswer(res, 2)
    // first_token_ms is 400 on ot; the stall never ends (total_ms is 20 s): a healthy failover
    // takes ~0.4 s, a loaded machine stretches it, not to 4.5 s.
    expect(performance.now() - t0).toBeLessThan(4_500)
    const [stalled] = bed.up.attempts({ model: 'fb2' })
    await Bun.sleep(100)
    expect(stalled!.endedBy).toBe('client')
  })

  test('(b) with retries and no fallback: a cut before content is retried on the same target', async () => {
    bed.up.script({ model: 'solo' }, { fault: 'cut', after: 0 }, 'ok')
    const res = await bed.post('responses', 'oa/solo', { stream: true })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-attempts')).toBe('2')
    const body = await res.text()
    expect(body).not.toContain('upstream_stream_interrupted')
    expect(body.match(/event: response\.created\n/g)).toHaveLength(1)
    expect(readStream('responses', body)).toMatchObject({
      text: bed.up.answer(),
      complete: true,
      error: null,
      model: 'oa/solo',
    })
    expect(bed.up.attempts().map((a) => a.model)).toEqual(['solo', 'solo'])
  })
})

describe('chat: the same in-band error is classified by its code', () => {
  test('an in-band insufficient_quota before content on chat pass-through → no retry on the key, which rests', async () => {
    // oa/fb2 on chat passes through (the byte relay), oc/plain's fallback route is the same wire.
    bed.up.script({ model: 'fb2' }, 'quota_in_stream')
    const res = await bed.post('chat', 'oa/fb2', { stream: true })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-attempts')).toBe('2')
    expect(readStream('chat', await res.text())).toMatchObject({
      complete: true,
      error: null,
      model: 'oc/plain',
    })
    // A credential failure: straight to the fallback, not retry.attempts more on the same key.
    expect(bed.up.attempts().map((a) => a.model)).toEqual(['fb2', 'plain'])
    // The key rests: the next request does not ask it.
    const next = await bed.post('chat', 'oa/fb2', { stream: true })
    expect(next.headers.get('x-switchyard-attempts')).toBe('1')
    await next.text()
    expect(bed.up.attempts({ model: 'fb2' })).toHaveLength(1)
  })
})

describe('nowhere left to go: an HTTP error, as chat pass-through gives for the same failure', () => {
  const surfaces = [
    ['responses', 'oa/solo', 'solo'],
    ['chat', 'oc/plain', 'plain'],
  ] as const

  test('an in-band out-of-quota error before content → 502 upstream_billing_error naming it', async () => {
    for (const [wire, id, name] of surfaces) {
      bed.up.script({ model: name }, 'quota_in_stream')
      const res = await bed.post(wire, id, { stream: true })
      expect([wire, res.status]).toEqual([wire, 502])
      expect(res.headers.get('content-type')).toStartWith('application/json')
      const { error } = (await res.json()) as any
      // As a 429 insufficient_quota is: the operator's account, not a fault to retry.
      expect(error.code).toBe('upstream_billing_error')
      expect(error.message).toContain('You exceeded your current quota')
    }
  })

  test('a cut before content every time → the retries, then 502 upstream_stream_interrupted', async () => {
    for (const [wire, id, name] of surfaces) {
      bed.up.script({ model: name }, { fault: 'cut', after: 0 })
      const res = await bed.post(wire, id, { stream: true })
      expect([wire, res.status]).toEqual([wire, 502])
      expect(((await res.json()) as any).error.code).toBe('upstream_stream_interrupted')
      expect(bed.up.attempts({ model: name })).toHaveLength(3)
    }
  })
})

describe('after content: the upstream stream as it came', () => {
  test('an in-band error after 3 words reaches the client byte for byte, not retried or failed over', async () => {
    bed.up.script({ model: 'fb2' }, { fault: 'quota_in_stream', after: 3 })
    const res = await bed.post('responses', 'oa/fb2', { stream: true })
    expect(res.status).toBe(200)
    const body = await res.text()
    const s = readStream('responses', body)
    expect(s).toMatchObject({ text: bed.up.answer().split(' ').slice(0, 3).join(' '), complete: false })
    expect(s.error).toMatchObject({ type: 'error', error: { code: 'insufficient_quota' } })
    // The upstream's own events, as the recording has them (OpenAI nests the error's fields).
    expect(body).toContain(
      'event: error\ndata: {"type":"error","sequence_number":7,"error":{"type":"insufficient_quota"',
    )
    expect(body).toContain('event: response.failed\ndata: {"type":"response.failed","sequence_number":8,')
    expect(body).toContain('"model":"oa/fb2"')
    expect(bed.up.attempts()).toHaveLength(1)
  })
})
