/**
 * A key pasted where something else belongs (a model id, an account name) is never echoed whole
 * in the error that refuses it: the message names its display prefix (`sk-sy-AbCdEf…`), as the
 * logs do. The key may be someone else's, and error bodies end up in client logs and bug reports.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

let gw: TestGateway
let key: string
let other: string

beforeAll(async () => {
  gw = await startGateway()
  key = (await gw.key('echoes', 'pro')).key
  other = (await gw.key('bystander', 'pro')).key
})
afterAll(() => gw.stop())

const json = { 'content-type': 'application/json' }
const cases = (pasted: string): Array<[string, string, RequestInit]> => [
  [
    'chat model',
    '/v1/chat/completions',
    {
      method: 'POST',
      headers: { ...bearer(key), ...json },
      body: JSON.stringify({ model: pasted, messages: [{ role: 'user', content: 'hi' }] }),
    },
  ],
  [
    'chat model with a slash',
    '/v1/chat/completions',
    {
      method: 'POST',
      headers: { ...bearer(key), ...json },
      body: JSON.stringify({ model: `demo/${pasted}`, messages: [{ role: 'user', content: 'hi' }] }),
    },
  ],
  [
    'messages model',
    '/v1/messages',
    {
      method: 'POST',
      headers: { 'x-api-key': key, ...json },
      body: JSON.stringify({ model: pasted, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    },
  ],
  [
    'responses model',
    '/v1/responses',
    {
      method: 'POST',
      headers: { ...bearer(key), ...json },
      body: JSON.stringify({ model: pasted, input: 'hi' }),
    },
  ],
  [
    'embeddings model',
    '/v1/embeddings',
    {
      method: 'POST',
      headers: { ...bearer(key), ...json },
      body: JSON.stringify({ model: pasted, input: 'hi' }),
    },
  ],
  ['model path', `/v1/models/${pasted}`, { headers: bearer(key) }],
  ['admin account path', `/admin/v1/accounts/${pasted}`, { headers: bearer(ADMIN_TOKEN) }],
]

test('an error names a pasted key by its display prefix only', async () => {
  for (const pasted of [key, other]) {
    for (const [what, path, init] of cases(pasted)) {
      const res = await fetch(`${gw.url}${path}`, init)
      const text = await res.text()
      expect({ what, status: res.status < 500, echoed: text.includes(pasted) }).toEqual({
        what,
        status: true,
        echoed: false,
      })
      expect({ what, named: text.includes(`${pasted.slice(0, 12)}…`) }).toEqual({ what, named: true })
    }
  }
})
