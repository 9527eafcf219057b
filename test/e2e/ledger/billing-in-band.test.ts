/**
 * OpenAI's out-of-quota failure (`insufficient_quota`) arriving in-band, with HTTP 200: an error
 * chunk in a chat stream, a 200 body carrying an error, the Responses wire's `error` /
 * `response.failed` events. The bug: as an error status (429) it is 502 `upstream_billing_error`,
 * but in-band it was 502 `upstream_error`, so the client and the request log called the same
 * failure two names. The real gateway in front of the fault upstream, one key per provider and no
 * fallback, so the failure is the answer.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { beforeEach } from '../../support/hooks.ts'
import { readStream } from '../../support/read-stream.ts'
import { FAST, type ResilienceBed, startResilienceBed } from '../../support/resilience-bed.ts'

const model = (name: string) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 4096,
  features: ['streaming', 'system_messages', 'tools'],
})

let bed: ResilienceBed
beforeAll(async () => {
  bed = await startResilienceBed({
    providers: (url) => [
      {
        prefix: 'oa',
        kind: 'openai',
        base_url: `${url}/v1`,
        api_key: 'sk-oa-billing-0001',
        ...FAST,
        models: [model('solo')],
      },
      {
        prefix: 'or',
        kind: 'openai',
        wire: 'responses',
        base_url: `${url}/v1`,
        api_key: 'sk-or-billing-0002',
        ...FAST,
        models: [model('solo')],
      },
    ],
  })
})
afterAll(() => bed.stop())
beforeEach(() => bed.reset())

const BILLING = { status: 502, code: 'upstream_billing_error' }

/** The HTTP error a request got, in the surface's terms: OpenAI's code, or Messages' header. */
async function httpError(surface: 'chat' | 'messages' | 'responses', res: Response) {
  const body = (await res.json()) as any
  const code = surface === 'messages' ? res.headers.get('x-switchyard-error-code') : body.error.code
  return { status: res.status, code }
}

describe('before content: the HTTP error is 502 upstream_billing_error, as for a 429 insufficient_quota', () => {
  test.each([
    ['chat', 'oa/solo', 'quota_in_stream', true], // pass-through: the byte relay's error chunk
    ['chat', 'oa/solo', 'quota_in_body', false], // pass-through: a 200 body carrying an error
    ['messages', 'oa/solo', 'quota_in_stream', true], // translated: the openai adapter's stream
    ['messages', 'oa/solo', 'quota_in_body', false], // translated: the adapter's JSON answer
    ['responses', 'oa/solo', 'quota_in_stream', true],
    ['responses', 'or/solo', 'quota_in_stream', true], // the Responses wire's error events
  ] as const)('%s to %s, %s', async (surface, id, fault, stream) => {
    bed.up.script({ model: 'solo' }, fault)
    const res = await bed.post(surface, id, { stream })
    expect(await httpError(surface, res)).toEqual(BILLING)
  })
})

describe('after content: the stream ends with the billing error, and the request log says so', () => {
  test('chat pass-through: the error chunk the client reads names upstream_billing_error', async () => {
    bed.up.script({ model: 'solo' }, { fault: 'quota_in_stream', after: 3 })
    const res = await bed.post('chat', 'oa/solo', { stream: true })
    const rid = res.headers.get('x-request-id')
    expect(res.status).toBe(200)
    const s = readStream('chat', await res.text())
    expect(s.complete).toBe(false)
    expect(s.error).toMatchObject({ code: 'upstream_billing_error' })
    const row = (await bed.requests()).find((r: any) => r.request_id === rid)
    expect(row).toMatchObject({ status: 502, error_code: 'upstream_billing_error' })
  })

  test('Responses pass-through: the upstream’s own events are relayed; the log says upstream_billing_error', async () => {
    bed.up.script({ model: 'solo' }, { fault: 'quota_in_stream', after: 3 })
    const res = await bed.post('responses', 'or/solo', { stream: true })
    const rid = res.headers.get('x-request-id')
    expect(res.status).toBe(200)
    const s = readStream('responses', await res.text())
    expect(s.error).toMatchObject({ type: 'error', error: { code: 'insufficient_quota' } })
    const row = (await bed.requests()).find((r: any) => r.request_id === rid)
    expect(row).toMatchObject({ status: 502, error_code: 'upstream_billing_error' })
  })
})
