/**
 * Issue 42: a client's `x-request-id` became the completion id (`chatcmpl-<id>`), so two accounts
 * sending the same header got the same id, and it keyed the access log. It is kept as the
 * client's (echoed, logged as `client_request_id`); the gateway's own ids stay unique.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw?.stop())

const CLIENT_ID = 'same-client-id-42'
const GATEWAY_ID = /^req_[0-9a-f]{32}$/

async function post(key: string, path: string, body: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', 'x-request-id': CLIENT_ID },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(200)
  return { echoed: res.headers.get('x-request-id'), id: ((await res.json()) as { id: string }).id }
}

const accessLines = () =>
  gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'access' && l.path !== '/healthz')

describe('a client x-request-id sent by two accounts', () => {
  test('chat and messages: echoed as sent, never the answer id; each answer its own id', async () => {
    const keys = [(await gw.key('alice', 'free')).key, (await gw.key('bob', 'free')).key]
    const chat = { model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }
    const messages = { model: 'demo/echo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }
    const answers = []
    for (const key of keys) {
      answers.push(await post(key, '/v1/chat/completions', chat))
      answers.push(await post(key, '/v1/messages', messages))
    }
    for (const a of answers) {
      expect(a.echoed).toBe(CLIENT_ID)
      expect(a.id).not.toContain(CLIENT_ID)
    }
    expect(new Set(answers.map((a) => a.id)).size).toBe(answers.length)
  })

  test('the access log keys each request by the gateway id, the client id beside it', async () => {
    let lines: any[] = []
    for (let i = 0; i < 100 && lines.length < 4; i++) {
      lines = accessLines().filter((l) => l.client_request_id === CLIENT_ID)
      if (lines.length < 4) await Bun.sleep(10)
    }
    expect(lines).toHaveLength(4)
    for (const l of lines) expect(l.request_id).toMatch(GATEWAY_ID)
    expect(new Set(lines.map((l) => l.request_id)).size).toBe(4)
    // Without a client id, the gateway's is both, and no client_request_id is written.
    const res = await fetch(`${gw.url}/v1/models`, { headers: bearer((await gw.key('carol', 'free')).key) })
    const own = res.headers.get('x-request-id')!
    expect(own).toMatch(GATEWAY_ID)
    let line: any
    for (let i = 0; i < 100 && !line; i++) {
      line = accessLines().find((l) => l.request_id === own)
      if (!line) await Bun.sleep(10)
    }
    expect(line).toBeDefined()
    expect(line.client_request_id).toBeUndefined()
  })
})
