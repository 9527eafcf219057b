/**
 * Requests malformed in their path or their body's encoding get a 4xx in the surface's own shape:
 * `GET /v1/models/%ZZ` was a 500 (a URIError, before authentication); a gzip body was a 400
 * "unexpected character \u001f" and a `br` one was read as if uncompressed; an unknown route under
 * `/v1/messages/` answered in OpenAI's error shape; an admin route's `:name` or `:id` that is no
 * valid escape (`/admin/v1/accounts/%ZZ`) was a 500 (Elysia hands the handler null).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  ADMIN_TOKEN,
  bearer,
  PLANS,
  startGateway,
  type TestGateway,
  testConfigDoc,
} from '../../support/gateway.ts'

let gw: TestGateway
let key: string
beforeAll(async () => {
  gw = await startGateway({ doc: testConfigDoc({ plans: PLANS }) })
  key = (await gw.key('paths', 'unlimited')).key
})
afterAll(() => gw.stop())

describe('GET /v1/models/<id> with a malformed %-escape', () => {
  const MALFORMED = ['%ZZ', '%', 'demo%2F%FF', 'demo/%E0%A4%A']

  test('without a key: 401, as for any id', async () => {
    for (const id of [...MALFORMED, 'demo/echo']) {
      const res = await fetch(`${gw.url}/v1/models/${id}`)
      expect({ id, status: res.status }).toEqual({ id, status: 401 })
      expect(((await res.json()) as any).error.code).toBe('invalid_api_key')
    }
  })

  test('with a key: 404 model_not_found, as an unknown id (no model has such a name)', async () => {
    for (const id of MALFORMED) {
      for (const headers of [bearer(key), { 'x-api-key': key, 'anthropic-version': '2023-06-01' }]) {
        const res = await fetch(`${gw.url}/v1/models/${id}`, { headers })
        const json = (await res.json()) as any
        expect({ id, status: res.status }).toEqual({ id, status: 404 })
        // An Anthropic client (anthropic-version) gets Anthropic's error shape, the code in a header.
        if ('anthropic-version' in headers) {
          expect(json).toMatchObject({ type: 'error', error: { type: 'not_found_error' } })
          expect(res.headers.get('x-switchyard-error-code')).toBe('model_not_found')
        } else expect(json.error).toMatchObject({ code: 'model_not_found', param: 'model' })
        expect(json.error.message).toContain(`'${id}'`)
      }
    }
    // Well-formed escapes still name the model.
    const escaped = await fetch(`${gw.url}/v1/models/demo%2Fecho`, { headers: bearer(key) })
    expect(((await escaped.json()) as any).id).toBe('demo/echo')
  })
})

describe('a compressed body', () => {
  const chat = JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] })
  const SURFACES: Array<[string, string]> = [
    ['/v1/chat/completions', chat],
    [
      '/v1/messages',
      JSON.stringify({ model: 'demo/echo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    ],
    [
      '/v1/messages/count_tokens',
      JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
    ],
    ['/v1/responses', JSON.stringify({ model: 'demo/echo', input: 'hi' })],
    ['/v1/responses/input_tokens', JSON.stringify({ model: 'demo/echo', input: 'hi' })],
    ['/v1/embeddings', JSON.stringify({ model: 'demo/echo', input: 'hi' })],
  ]
  const send = (path: string, body: string | Uint8Array, encoding: string) =>
    fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json', 'content-encoding': encoding },
      body,
    })

  test('415 naming the encoding, in each surface’s shape, for gzip, br, deflate and a list', async () => {
    for (const [path, body] of SURFACES) {
      for (const [encoding, bytes] of [
        ['gzip', Bun.gzipSync(body)],
        ['br', body], // uncompressed bytes: the header alone decides
        ['deflate', Bun.deflateSync(body)],
        ['identity, gzip', Bun.gzipSync(body)],
      ] as const) {
        const res = await send(path, bytes, encoding)
        const json = (await res.json()) as any
        const where = `${path} ${encoding}`
        expect({ where, status: res.status }).toEqual({ where, status: 415 })
        expect(res.headers.get('accept-encoding')).toBe('identity')
        const named = encoding.replace('identity, ', '')
        if (path.startsWith('/v1/messages')) {
          expect(json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
          expect(json.error.message).toContain(`'${named}'`)
        } else {
          expect(json.error).toMatchObject({
            code: 'unsupported_content_encoding',
            type: 'invalid_request_error',
          })
          expect(json.error.message).toContain(`'${named}'`)
        }
      }
    }
  })

  test('identity, or no Content-Encoding, is read as before', async () => {
    expect((await send('/v1/chat/completions', chat, 'identity')).status).toBe(200)
    expect((await send('/v1/chat/completions', chat, 'Identity')).status).toBe(200)
  })
})

describe('an unknown route under /v1/messages', () => {
  test('404 in Anthropic’s error shape; elsewhere OpenAI’s', async () => {
    for (const [method, path] of [
      ['POST', '/v1/messages/batches'],
      ['GET', '/v1/messages/batches/msgbatch_1'],
      ['GET', '/v1/messages'],
    ]) {
      const res = await fetch(`${gw.url}${path}`, { method, headers: { 'x-api-key': key } })
      const json = (await res.json()) as any
      expect({ path, status: res.status }).toEqual({ path, status: 404 })
      expect(json).toMatchObject({ type: 'error', error: { type: 'not_found_error' } })
      expect(json.error.message).toContain('Unknown route')
      expect(res.headers.get('x-switchyard-error-code')).toBe('not_found')
    }
    for (const path of ['/v1/messagesx', '/v1/nope']) {
      const json = (await (await fetch(`${gw.url}${path}`, { method: 'POST' })).json()) as any
      expect(json.error).toMatchObject({ type: 'not_found_error', code: 'not_found' })
      expect(json.type).toBeUndefined()
    }
  })
})

describe('an admin path parameter with a malformed %-escape', () => {
  const ROUTES: Array<[string, string]> = [
    ['GET', '/admin/v1/accounts/%ZZ'],
    ['GET', '/admin/v1/accounts/%E0%A4%A'],
    ['GET', '/admin/v1/accounts/%ZZ/usage'],
    ['POST', '/admin/v1/accounts/%ZZ/disable'],
    ['POST', '/admin/v1/accounts/%ZZ/plan'],
    ['GET', '/admin/v1/keys/%ZZ'],
    ['POST', '/admin/v1/keys/%ZZ/rotate'],
    ['PATCH', '/admin/v1/keys/%ZZ/limits'],
    ['DELETE', '/admin/v1/sessions/%ZZ'],
    ['GET', '/admin/v1/requests/%ZZ'],
  ]
  const send = (method: string, path: string, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}${path}`, {
      method,
      headers: {
        ...headers,
        ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }),
      },
      ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }),
    })

  test('with the admin token: 400 invalid_path in the admin error shape, naming the parameter, on every route', async () => {
    for (const [method, path] of ROUTES) {
      const res = await send(method, path, bearer(ADMIN_TOKEN))
      const json = (await res.json()) as any
      expect({ method, path, status: res.status, code: json.error?.code }).toEqual({
        method,
        path,
        status: 400,
        code: 'invalid_path',
      })
      expect(json.error.type).toBe('invalid_request_error')
      expect(json.error.message).toContain('percent')
    }
  })

  test('without it: 401, as for any admin path (the guard answers first)', async () => {
    for (const [method, path] of ROUTES) {
      const res = await send(method, path)
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 })
      await res.text()
    }
  })

  test("the console's asset route (open to anyone): 400 invalid_path too, not a 500", async () => {
    const res = await fetch(`${gw.url}/console/assets/%ZZ`)
    expect([res.status, ((await res.json()) as any).error?.code]).toEqual([400, 'invalid_path'])
    // A well-formed name that is no file is still 404.
    const missing = await fetch(`${gw.url}/console/assets/nope.js`)
    expect(missing.status).toBe(404)
    await missing.text()
  })
})
