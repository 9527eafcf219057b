/**
 * The console's sign-in routes (`POST /console/session` with the admin token, `POST
 * /console/me/session` with an API key) take their credential in the body and no other
 * authentication, so they are the first thing an outsider reaches. Found by an audit (issue 31):
 * a reply that quoted the whole key or token back, a key with a space called a "malformed
 * Authorization header", a wrong token left no warning.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../../support/gateway.ts'
import { sendAndHold } from '../../support/raw-http.ts'

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

describe('console sign-in: what is read', () => {
  test('a foreign Origin is refused before the body is read: 403 at once for a body that never comes', async () => {
    const port = Number(new URL(gw.url).port)
    for (const [method, path] of [
      ['POST', '/console/session'],
      ['POST', '/console/me/session'],
      ['DELETE', '/console/session'],
      ['DELETE', '/console/me/session'],
    ] as const) {
      const head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: https://evil.example\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n`
      const r = await sendAndHold(port, head, [])
      expect({ path, status: r.status }).toEqual({ path, status: 403 })
      expect(JSON.parse(r.body).error.code).toBe('cross_origin_refused')
    }
  })

  test('signing out takes no body: a field sent → 400 naming it; none is fine', async () => {
    for (const path of ['/console/session', '/console/me/session']) {
      const sent = await fetch(`${gw.url}${path}`, {
        method: 'DELETE',
        headers: { 'content-type': 'application/json', origin: origin() },
        body: '{"x":1}',
      })
      expect(sent.status).toBe(400)
      expect(((await sent.json()) as any).error).toMatchObject({ code: 'invalid_value', param: 'x' })
      const bare = await fetch(`${gw.url}${path}`, { method: 'DELETE', headers: { origin: origin() } })
      expect(bare.status).toBe(200)
    }
  })

  test('a sign-in body is JSON: another content type → 415', async () => {
    const r = await post('/console/me/session', `key=${key}`, {
      'content-type': 'application/x-www-form-urlencoded',
    })
    expect(r.status).toBe(415)
    expect(r.error.code).toBe('unsupported_media_type')
    expect(r.text).not.toContain(key.slice(6))
  })
})

describe('console sign-in: malformed credentials', () => {
  test('a key with a space inside → 401 saying the key is malformed (no header was sent)', async () => {
    const r = await post(
      '/console/me/session',
      JSON.stringify({ key: `${key.slice(0, 12)} ${key.slice(12)}` }),
    )
    expect(r.status).toBe(401)
    expect(r.error.code).toBe('invalid_api_key')
    expect(r.error.message).toStartWith('Malformed API key')
    expect(r.error.message).not.toContain('Authorization')
    expect(r.text).not.toContain(key.slice(12))
  })

  test('a token with a space inside → 401 saying the token is malformed', async () => {
    const r = await post(
      '/console/session',
      JSON.stringify({ token: `${ADMIN_TOKEN.slice(0, 8)} ${ADMIN_TOKEN.slice(8)}` }),
    )
    expect(r.status).toBe(401)
    expect(r.error.code).toBe('invalid_admin_token')
    expect(r.error.message).toStartWith('Malformed admin token')
    expect(r.error.message).not.toContain('Authorization')
  })

  test('spaces around a pasted key or token are the paste’s: signed in', async () => {
    expect((await post('/console/me/session', JSON.stringify({ key: ` ${key}\n` }))).status).toBe(200)
    expect((await post('/console/session', JSON.stringify({ token: `${ADMIN_TOKEN} ` }))).status).toBe(200)
  })
})
