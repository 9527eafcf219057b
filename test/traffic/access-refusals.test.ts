/**
 * Issue 22 finding 4: every refusal the gateway makes itself carries its `error_code` on the
 * access line (401, 403 model_not_in_plan, 404, 400, 415, 429 — it was null for all of them), and
 * `/v1/models` lines name the account of a valid key (it was null).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({ plans: { ...PLANS, tiny: { rpm: 1, rpd: null, models: ['tier:free'] } } }),
  })
})
afterAll(() => gw.stop())

const post = (path: string, key: string, body: string, type = 'application/json') =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': type, 'anthropic-version': '2023-06-01' },
    body,
  })
const chatBody = (model = 'demo/echo') =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] })

const accessLines = () =>
  gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'access' && l.surface !== 'health')

test('each refusal: its status and code on the access line, with the account when the key was valid', async () => {
  const { key } = await gw.key('refused', 'tiny')
  const cases: Array<[() => Promise<Response>, number, string, string | null]> = [
    [() => post('/v1/chat/completions', key, chatBody()), 200, '', 'refused'],
    [() => post('/v1/chat/completions', key, chatBody()), 429, 'rate_limit_exceeded', 'refused'],
    [() => post('/v1/chat/completions', 'sk-sy-not-a-real-key-000000000000', chatBody()), 401, '', null],
    [() => post('/v1/chat/completions', key, chatBody('demo/echo-pro')), 403, 'model_not_in_plan', 'refused'],
    [() => post('/v1/chat/completions', key, chatBody('demo/nope')), 404, 'model_not_found', 'refused'],
    [() => post('/v1/chat/completions', key, '{"model": "demo/echo"'), 400, '', 'refused'],
    [() => post('/v1/chat/completions', key, chatBody(), 'text/plain'), 415, '', 'refused'],
    [() => post('/v1/messages', key, '{"model":"demo/echo"}'), 400, '', 'refused'],
    [() => post('/v1/responses', key, '{"model":"nope","input":"hi"}'), 400, 'invalid_model', 'refused'],
    [
      () =>
        post(
          '/v1/messages/count_tokens',
          key,
          '{"model":"demo/nope","messages":[{"role":"user","content":"hi"}]}',
        ),
      404,
      'model_not_found',
      'refused',
    ],
    [() => fetch(`${gw.url}/v1/models`, { headers: bearer(key) }), 200, '', 'refused'],
    [() => fetch(`${gw.url}/v1/models`, { headers: bearer('sk-sy-nope') }), 401, '', null],
    [() => fetch(`${gw.url}/v1/usage`, { headers: bearer(key) }), 200, '', 'refused'],
    [() => fetch(`${gw.url}/no-such-route`), 404, 'not_found', null],
  ]
  const before = accessLines().length
  const got: Array<{ status: number; code: string | null }> = []
  for (const [send] of cases) {
    const res = await send()
    const body = await res.text()
    got.push({ status: res.status, code: res.status >= 400 ? (JSON.parse(body).error?.code ?? null) : null })
  }
  expect(got.map((g) => g.status)).toEqual(cases.map((c) => c[1]))
  for (let i = 0; i < 50 && accessLines().length < before + cases.length; i++) await Bun.sleep(20)
  const lines = accessLines().slice(before)
  expect(lines).toHaveLength(cases.length)
  cases.forEach(([, status, code, account], i) => {
    const line = lines[i]!
    expect({ i, status: line.status, account: line.account }).toEqual({ i, status, account })
    if (status < 400) expect(line.error_code).toBeNull()
    else {
      // The code the client got, on the line (Anthropic's error body on /v1/messages has none to
      // compare with); a named one where the case names it.
      if (got[i]!.code !== null) expect({ i, code: line.error_code }).toEqual({ i, code: got[i]!.code })
      expect(line.error_code).not.toBeNull()
      if (code) expect(line.error_code).toBe(code)
    }
  })
  // /v1/models lines carry the key's prefix too.
  expect(lines[10]!.key_prefix).toMatch(/^sk-sy-/)
})
