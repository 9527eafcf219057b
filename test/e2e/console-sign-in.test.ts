/**
 * The console's sign-in routes (`POST /console/session` with the admin token, `POST
 * /console/me/session` with an API key) take their credential in the body and no other
 * authentication, so they are the first thing an outsider reaches. Found by an audit (issue 31):
 * a reply that quoted the whole key or token back, a key with a space called a "malformed
 * Authorization header", a wrong token left no warning.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../support/gateway.ts'

let gw: TestGateway
let key: string
beforeAll(async () => {
  gw = await startGateway()
  key = (await gw.key('signer', 'free')).key
})
afterAll(() => gw.stop())

const origin = () => new URL(gw.url).origin

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: origin(), ...headers },
    body,
  })
  const text = await r.text()
  return { status: r.status, text, error: (JSON.parse(text) as any).error }
}

describe('console sign-in: what the replies say', () => {
  test('a key or the token sent as the wrong type is not quoted back: 400 naming the field', async () => {
    for (const [path, field, secret] of [
      ['/console/me/session', 'key', key],
      ['/console/session', 'token', ADMIN_TOKEN],
    ] as const) {
      for (const value of [[secret], { x: secret }, [[secret]]]) {
        const r = await post(path, JSON.stringify({ [field]: value }))
        expect(r.status).toBe(400)
        expect(r.error).toMatchObject({ code: 'invalid_type', param: field })
        expect(r.error.message).toBe(
          `${field}: must be a string of at most ${field === 'key' ? 200 : 4096} characters; got ${Array.isArray(value) ? 'an array' : 'an object'}.`,
        )
        expect(r.text).not.toContain(secret.slice(6, 20))
      }
    }
  })
})
