/**
 * Requests malformed in their path get a 4xx in the surface's own shape: `GET /v1/models/%ZZ` was
 * a 500 (a URIError, before authentication).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../support/gateway.ts'

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
        expect(json.error).toMatchObject({ code: 'model_not_found', param: 'model' })
        expect(json.error.message).toContain(`'${id}'`)
      }
    }
    // Well-formed escapes still name the model.
    const escaped = await fetch(`${gw.url}/v1/models/demo%2Fecho`, { headers: bearer(key) })
    expect(((await escaped.json()) as any).id).toBe('demo/echo')
  })
})
