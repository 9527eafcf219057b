/**
 * Issue 22 finding 4: refusals are visible per key. The request log holds admitted requests only,
 * so a customer's "I keep getting 429" (or 403 model_not_in_plan, 400 …) could not be looked up.
 * Refusals before admission are now counted per key, code and UTC hour in the store — bounded: a
 * flood of equal refusals is one row with a count — and read by `GET /admin/v1/refusals` (the
 * data behind the console's per-key refusals). Every backend.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { backends } from '../../support/backends.ts'
import {
  ADMIN_TOKEN,
  bearer,
  PLANS,
  startGateway,
  type TestGateway,
  testConfigDoc,
} from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

let gw: TestGateway
/** The first test's gateway, which the third's admin checks use too: stopped by their describe. */
let shared: TestGateway | undefined
afterEach(async () => {
  if (gw !== shared) await gw?.stop()
})

const chat = (key: string, model = 'demo/echo', body?: string, type = 'application/json') =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': type },
    body: body ?? JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  }).then(async (r) => {
    await r.arrayBuffer()
    return r.status
  })

async function refusals(query: string): Promise<any> {
  await gw.deps.recorder.flush()
  const res = await fetch(`${gw.url}/admin/v1/refusals${query}`, { headers: bearer(ADMIN_TOKEN) })
  expect(res.status).toBe(200)
  return res.json()
}

for (const backend of backends('refusals-per-key.test.ts')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    // The third test's two admin checks read no refusal: they run on the first test's gateway
    // (after it) rather than on a gateway and a database of their own.
    const tiny = async () =>
      (shared ??= await startGateway({
        doc: testConfigDoc({
          usage: { flush_ms: 10 },
          plans: { ...PLANS, tiny: { rpm: 1, rpd: null, models: ['tier:free'] } },
        }),
        backend: await backend.fresh(),
      }))
    afterAll(async () => {
      await shared?.stop()
      shared = undefined
    })

    test('each key’s refusals, by code: 429, 403, 404, 400, 415 — admitted requests not among them', async () => {
      gw = await tiny()
      const a = await gw.key('alice', 'tiny')
      const b = await gw.key('bob', 'tiny')
      const statuses = [
        await chat(a.key), // 200, admitted
        await chat(a.key), // 429
        await chat(a.key), // 429
        await chat(a.key), // 429
        await chat(a.key, 'demo/echo-pro'), // 403 model_not_in_plan
        await chat(a.key, 'demo/echo-pro'), // 403
        await chat(a.key, 'demo/nope'), // 404
        await chat(a.key, 'demo/echo', '{"model": "demo/echo"'), // 400
        await chat(b.key, 'demo/echo', '{}', 'text/plain'), // 415
        await chat('sk-sy-not-a-real-key-000000000000'), // 401: no key to count it against
      ]
      expect(statuses).toEqual([200, 429, 429, 429, 403, 403, 404, 400, 415, 401])

      const alice = await refusals(`?key=${a.id}`)
      expect(alice.totals).toEqual([
        { key_id: a.id, code: 'rate_limit_exceeded', status: 429, count: 3 },
        { key_id: a.id, code: 'model_not_in_plan', status: 403, count: 2 },
        expect.objectContaining({ key_id: a.id, status: 400, count: 1 }),
        { key_id: a.id, code: 'model_not_found', status: 404, count: 1 },
      ])
      expect(alice.data.every((r: any) => r.hour.endsWith(':00:00.000Z'))).toBe(true)

      const byAccount = await refusals('?account=bob')
      expect(byAccount.totals).toEqual([
        { key_id: b.id, code: 'unsupported_media_type', status: 415, count: 1 },
      ])
      const all = await refusals('')
      expect(all.totals.reduce((n: number, t: any) => n + t.count, 0)).toBe(8)
    })

    test('bounded: a flood of equal refusals is one row with its count; pruned with the hourly rollups', async () => {
      // Suspension off: it would stop counting this key's refusals (403 key_suspended) at 50.
      gw = await startGateway({
        doc: testConfigDoc({ usage: { flush_ms: 10 }, limits: { suspension: { enabled: false } } }),
        backend: await backend.fresh(),
      })
      const a = await gw.key('flood', 'free')
      for (let i = 0; i < 200; i++) await chat(a.key, 'demo/echo-pro')
      const flood = await refusals(`?key=${a.id}`)
      expect(flood.data).toHaveLength(1)
      expect(flood.data[0]).toMatchObject({ code: 'model_not_in_plan', status: 403, count: 200 })

      const now = gw.deps.clock.now()
      await gw.deps.store.pruneHistory({
        logBefore: 0,
        logMaxRows: 1e9,
        logKeepAfter: 0,
        hourlyBefore: now + 3_600_000,
        dailyBefore: 0,
        chunk: 1000,
      })
      expect((await refusals(`?key=${a.id}`)).data).toEqual([])
    })

    test('the admin token is required; a bad time is a 400 naming it', async () => {
      gw = await tiny()
      expect((await fetch(`${gw.url}/admin/v1/refusals`)).status).toBe(401)
      const res = await fetch(`${gw.url}/admin/v1/refusals?from=yesterday`, { headers: bearer(ADMIN_TOKEN) })
      expect(res.status).toBe(400)
      expect(((await res.json()) as any).error.param).toBe('from')
    })
  })
}
