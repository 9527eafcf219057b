/**
 * A refusal quotes what was sent cut at 64 or 100 characters (`clip`), and the key mask ran on the
 * message after the cut: a key sent across the cut point lost its tail there, no longer looked
 * like a key (the prefix and 32 characters), and its first 24 characters came back, 18 of them
 * past the display prefix `sk-sy-AbCdEf`. Now what is quoted is masked before it is cut, on every
 * route that quotes a value: the model (chat, messages, responses, embeddings, `/v1/models/…`), a
 * CORS origin, a Host name, an account name, a session id, a console file, the Content-Type and
 * Content-Encoding, a Responses `item_reference` id, and a provider key (`sk-proj-…`) too.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { rawRequest } from '../../support/raw-http.ts'

let gw: TestGateway
let caller: string
let pasted: string

beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({ server: { host: '127.0.0.1', port: 0, cors_origins: ['https://app.example'] } }),
  })
  caller = (await gw.key('caller', 'pro')).key
  pasted = (await gw.key('bystander', 'pro')).key
})
afterAll(() => gw.stop())

/** An OpenAI project key's shape (made up): what a client pastes into the wrong field. */
const PROVIDER_KEY = `sk-proj-${'Q7wErTy9UiOp3AsDf6GhJkL2'.repeat(3)}`

/**
 * Padding that puts the key's first 30 characters before a cut at 64 and at 100 characters of the
 * quoted value (the prefix, the 6 display characters and 18 more), and one that puts all of it before.
 */
const PADS = [34, 70, 8]

/** Whether `text` gives away more of `key` than its display prefix: any 8 characters past it. */
function leaks(text: string, key: string): string | null {
  const secret = key.slice(12).toLowerCase()
  const t = text.toLowerCase()
  for (let i = 0; i + 8 <= secret.length; i++) {
    if (t.includes(secret.slice(i, i + 8))) return secret.slice(i, i + 8)
  }
  return null
}

const json = { 'content-type': 'application/json' }
const chat = (model: string) => JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] })

/** Each way a value gets quoted: what to send for the value `v`. */
const CASES: Array<[string, (v: string) => [string, RequestInit]]> = [
  [
    'chat model',
    (v) => [
      '/v1/chat/completions',
      { method: 'POST', headers: { ...bearer(caller), ...json }, body: chat(v) },
    ],
  ],
  [
    'chat model after a known prefix',
    (v) => [
      '/v1/chat/completions',
      { method: 'POST', headers: { ...bearer(caller), ...json }, body: chat(`demo/${v}`) },
    ],
  ],
  [
    'chat model with an unknown prefix',
    (v) => [
      '/v1/chat/completions',
      { method: 'POST', headers: { ...bearer(caller), ...json }, body: chat(`${v}/echo`) },
    ],
  ],
  [
    'messages model',
    (v) => [
      '/v1/messages',
      {
        method: 'POST',
        headers: { 'x-api-key': caller, ...json },
        body: JSON.stringify({ model: v, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      },
    ],
  ],
  [
    'responses model',
    (v) => [
      '/v1/responses',
      {
        method: 'POST',
        headers: { ...bearer(caller), ...json },
        body: JSON.stringify({ model: v, input: 'hi' }),
      },
    ],
  ],
  [
    'responses item_reference id',
    (v) => [
      '/v1/responses',
      {
        method: 'POST',
        headers: { ...bearer(caller), ...json },
        body: JSON.stringify({ model: 'demo/echo', input: [{ type: 'item_reference', id: v }] }),
      },
    ],
  ],
  [
    'embeddings model',
    (v) => [
      '/v1/embeddings',
      {
        method: 'POST',
        headers: { ...bearer(caller), ...json },
        body: JSON.stringify({ model: v, input: 'hi' }),
      },
    ],
  ],
  ['model path', (v) => [`/v1/models/${v}`, { headers: bearer(caller) }]],
  ['model path after a prefix', (v) => [`/v1/models/demo/${v}`, { headers: bearer(caller) }]],
  ['admin account path', (v) => [`/admin/v1/accounts/${v}`, { headers: bearer(ADMIN_TOKEN) }]],
  [
    'admin session id',
    (v) => [`/admin/v1/sessions/${v}`, { method: 'DELETE', headers: bearer(ADMIN_TOKEN) }],
  ],
  ['console file', (v) => [`/console/assets/${v}`, {}]],
  [
    'CORS origin',
    (v) => [
      '/v1/chat/completions',
      {
        method: 'OPTIONS',
        headers: { origin: `https://${v}.example`, 'access-control-request-method': 'POST' },
      },
    ],
  ],
  [
    'Content-Type',
    (v) => [
      '/v1/chat/completions',
      {
        method: 'POST',
        headers: { ...bearer(caller), 'content-type': `text/${v}` },
        body: chat('demo/echo'),
      },
    ],
  ],
  [
    'Content-Encoding',
    (v) => [
      '/v1/chat/completions',
      {
        method: 'POST',
        headers: { ...bearer(caller), ...json, 'content-encoding': v },
        body: chat('demo/echo'),
      },
    ],
  ],
]

describe('a key sent where a refusal quotes the value', () => {
  for (const [what, request] of CASES) {
    test(`${what}: no part of it past the display prefix comes back`, async () => {
      for (const key of [pasted, PROVIDER_KEY]) {
        for (const pad of PADS) {
          const [path, init] = request(`${'x'.repeat(pad)}-${key}`)
          const res = await fetch(`${gw.url}${path}`, init)
          const text = await res.text()
          expect({ what, pad, refused: res.status >= 400 && res.status < 500 }).toEqual({
            what,
            pad,
            refused: true,
          })
          expect({ what, pad, leak: leaks(text, key) }).toEqual({ what, pad, leak: null })
        }
      }
    })
  }

  test('Host name: no part of it past the display prefix comes back', async () => {
    const port = Number(new URL(gw.url).port)
    for (const key of [pasted, PROVIDER_KEY]) {
      for (const pad of PADS) {
        const host = `${'x'.repeat(pad)}-${key}.example.com`
        const res = await rawRequest(
          port,
          `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
        )
        expect({ pad, status: res.status }).toEqual({ pad, status: 403 })
        expect({ pad, leak: leaks(res.body, key) }).toEqual({ pad, leak: null })
      }
    }
  })
})
