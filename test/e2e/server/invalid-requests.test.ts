/**
 * Requests refused for what they contain count toward the key's suspension, like rate-limited
 * ones, unless `limits.suspension.count_invalid` is false (issue 9, finding 2).
 */
import { describe, expect, test } from 'bun:test'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

let gw: TestGateway | undefined
afterEach(async () => {
  await gw?.stop()
  gw = undefined
})

async function start(suspension: Record<string, unknown>) {
  gw = await startGateway({
    doc: testConfigDoc({
      server: { host: '127.0.0.1', port: 0, body_limit_bytes: 4096 },
      plans: { ...PLANS, free: { rpm: null, rpd: null, models: ['*'] } },
      limits: { suspension: { max_rejections: 3, ...suspension } },
    }),
  })
  return { gw, key: (await gw.key('acct', 'free')).key }
}

const post = (g: TestGateway, key: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', ...headers },
    body,
  })

const VALID = JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] })

describe('invalid requests and suspension', () => {
  test('400, 404, 413 and 415 refusals add up; past max_rejections the key is suspended', async () => {
    const { gw, key } = await start({})
    const refusals: Array<[string, Record<string, string>, number]> = [
      ['{"model": ', {}, 400],
      [JSON.stringify({ model: 'demo/nope', messages: [{ role: 'user', content: 'hi' }] }), {}, 404],
      ['x', { 'content-type': 'text/plain' }, 415],
      ['['.repeat(8192), {}, 413],
    ]
    for (const [body, headers, status] of refusals)
      expect((await post(gw, key, body, headers)).status).toBe(status)
    const res = await post(gw, key, VALID)
    expect(res.status).toBe(403)
    const json = (await res.json()) as any
    expect(json.error.code).toBe('key_suspended')
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    // Suspended for invalid requests: the message may not say it was for its rate limits only.
    expect(json.error.message).not.toContain('exceeding its rate limits')
    expect(json.error.message).toContain('invalid requests')
    expect(json.error.message).toMatch(/suspended for \d+ s/)
    expect(gw.logs.some((l) => l.includes('key suspended after repeated invalid requests'))).toBe(true)
    // The log names the key by its prefix only.
    expect(gw.logs.join('\n')).not.toContain(key)
  })

  test('valid requests in between do not reset the count, and another key of the account is not affected', async () => {
    const { gw, key } = await start({})
    const other = (await gw.key('acct')).key
    for (let i = 0; i < 4; i++) {
      expect((await post(gw, key, '{')).status).toBe(400)
      if (i < 3) expect((await post(gw, key, VALID)).status).toBe(200)
    }
    expect((await post(gw, key, VALID)).status).toBe(403)
    expect((await post(gw, other, VALID)).status).toBe(200)
  })

  test('count_invalid: false → invalid requests never suspend', async () => {
    const { gw, key } = await start({ count_invalid: false })
    for (let i = 0; i < 10; i++) expect((await post(gw, key, '{')).status).toBe(400)
    expect((await post(gw, key, VALID)).status).toBe(200)
  })

  test('suspension disabled → invalid requests never suspend', async () => {
    const { gw, key } = await start({ enabled: false })
    for (let i = 0; i < 10; i++) expect((await post(gw, key, '{')).status).toBe(400)
    expect((await post(gw, key, VALID)).status).toBe(200)
  })
})
