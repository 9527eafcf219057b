/**
 * The Anthropic-format `GET /v1/models` pages as Anthropic's list-models does: `limit` (default 20,
 * 1 to 1,000), `after_id` / `before_id` cursors, `first_id` / `last_id` and `has_more` in the
 * direction asked — so the Anthropic SDK's auto-paging (`for await … models.list()`, as Claude Code
 * lists models with `limit: 1000`) sees every chat model once. Also: a number JSON cannot hold
 * (`1e400`) is refused as too large, not as "Infinity".
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

/** 25 chat models: more than one default page. */
const NAMES = Array.from({ length: 25 }, (_, i) => `m${String(i).padStart(2, '0')}`)
const IDS = NAMES.map((n) => `demo/${n}`)

let gw: TestGateway
let key: string
beforeAll(async () => {
  const models = NAMES.map((name) => ({
    name,
    context_window: 8192,
    max_output_tokens: 1024,
    features: ['streaming', 'system_messages'],
  }))
  gw = await startGateway({
    doc: testConfigDoc({ providers: [{ prefix: 'demo', kind: 'demo', models }], default_plan: 'unlimited' }),
  })
  key = (await gw.key('pager', 'unlimited')).key
})
afterAll(() => gw.stop())

const list = async (query = '') => {
  const res = await fetch(`${gw.url}/v1/models${query}`, {
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
  })
  return { status: res.status, body: (await res.json()) as any }
}
const ids = (body: any) => body.data.map((m: { id: string }) => m.id)

test('20 by default, has_more; after_id the next page; before_id the page before', async () => {
  const first = await list()
  expect(ids(first.body)).toEqual(IDS.slice(0, 20))
  expect(first.body).toMatchObject({ has_more: true, first_id: IDS[0], last_id: IDS[19] })

  const next = await list(`?after_id=${encodeURIComponent(first.body.last_id)}`)
  expect(ids(next.body)).toEqual(IDS.slice(20))
  expect(next.body).toMatchObject({ has_more: false, first_id: IDS[20], last_id: IDS[24] })

  const back = await list(`?limit=5&before_id=${encodeURIComponent(IDS[20]!)}`)
  expect(ids(back.body)).toEqual(IDS.slice(15, 20))
  expect(back.body.has_more).toBe(true)
  const start = await list(`?limit=5&before_id=${encodeURIComponent(IDS[3]!)}`)
  expect(ids(start.body)).toEqual(IDS.slice(0, 3))
  expect(start.body.has_more).toBe(false)

  expect(ids((await list('?limit=1000')).body)).toEqual(IDS)
})

test('a bad limit, an unknown cursor or both cursors → 400 in Anthropic’s shape naming it', async () => {
  for (const [query, named] of [
    ['?limit=0', 'limit'],
    ['?limit=1001', 'limit'],
    ['?limit=abc', 'limit'],
    ['?after_id=demo/nope', 'after_id'],
    [`?after_id=${IDS[1]}&before_id=${IDS[5]}`, 'before_id'],
  ] as const) {
    const { status, body } = await list(query)
    expect(`${query} ${status}`).toBe(`${query} 400`)
    expect(body.type).toBe('error')
    expect(body.error.message).toContain(named)
  }
})

test('the Anthropic SDK pages through every chat model (Claude Code lists with limit 1000)', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 })
  for (const limit of [7, 1000]) {
    const seen: string[] = []
    for await (const m of client.models.list({ limit })) seen.push(m.id)
    expect(seen).toEqual(IDS)
  }
})

test('max_tokens 1e400 (past what a JSON number holds): refused as too large, naming the bound', async () => {
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: `{"model": "demo/m00", "max_tokens": 1${'0'.repeat(400)}, "messages": [{"role": "user", "content": "Hi"}]}`,
  })
  expect(res.status).toBe(400)
  const message: string = ((await res.json()) as any).error.message
  expect(message).toContain('max_tokens')
  expect(message).toContain('too large')
  expect(message).toContain(String(Number.MAX_VALUE))
  expect(message).not.toContain('Infinity')
})
