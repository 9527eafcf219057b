/**
 * Usage rows are keyed by the gateway's own request id, on every backend: a client's
 * x-request-id is kept and echoed but may repeat, and each admitted request still gets its own
 * row and its own outcome; without a client id, the gateway's id is the x-request-id.
 */
import { describe, expect, test } from 'bun:test'
import { backends } from '../../support/backends.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

let gw: TestGateway
afterEach(async () => {
  await gw?.stop()
})

const GATEWAY_ID = /^req_[0-9a-f]{32}$/

async function chat(key: string, words: number, rid?: string) {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...(rid ? { 'x-request-id': rid } : {}),
    },
    body: JSON.stringify({
      model: 'demo/echo',
      messages: [{ role: 'user', content: 'word '.repeat(words) }],
    }),
  })
  const body = (await r.json()) as any
  return {
    status: r.status,
    rid: r.headers.get('x-request-id')!,
    completion: body.usage.completion_tokens as number,
  }
}

const requests = async (query = '') => {
  const r = await fetch(`${gw.url}/admin/v1/requests${query}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  })
  return (await r.json()) as any
}

for (const backend of backends('request-ids.test.ts')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test('a repeated client x-request-id → one row per request, each with its own outcome; usage keyed by the gateway id', async () => {
      gw = await startGateway({
        doc: testConfigDoc({ usage: { flush_ms: 10 } }),
        backend: await backend.fresh(),
      })
      const { key } = await gw.key('ids', 'unlimited')
      const answers = [await chat(key, 1, 'client-dup'), await chat(key, 7, 'client-dup'), await chat(key, 3)]
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200])
      // The client's id is echoed as sent; without one the gateway makes one.
      expect(answers[0]!.rid).toBe('client-dup')
      expect(answers[1]!.rid).toBe('client-dup')
      expect(answers[2]!.rid).toMatch(GATEWAY_ID)
      let rows: any[] = []
      for (let i = 0; i < 100; i++) {
        await gw.deps.recorder.flush()
        rows = (await requests()).data
        if (rows.length === 3 && rows.every((r) => r.status !== null)) break
        await Bun.sleep(20)
      }
      expect(rows).toHaveLength(3)
      expect(new Set(rows.map((r) => r.gateway_id)).size).toBe(3)
      for (const r of rows) expect(r.gateway_id).toMatch(GATEWAY_ID)
      const dup = rows.filter((r) => r.request_id === 'client-dup')
      expect(dup).toHaveLength(2)
      for (const r of dup) expect(r.gateway_id).not.toBe('client-dup')
      const own = rows.find((r) => r.request_id === answers[2]!.rid)
      expect(own.gateway_id).toBe(answers[2]!.rid)
      // Every outcome landed on its own row: the token counts differ per request.
      expect(rows.map((r) => r.completion_tokens).sort()).toEqual(answers.map((a) => a.completion).sort())
      expect(rows.every((r) => r.status === 200)).toBe(true)
      // The request log's cursor (created_at, row id) walks all three, one per page.
      const seen: string[] = []
      let cursor = ''
      for (let page = 0; page < 5; page++) {
        const p = await requests(`?limit=1${cursor ? `&cursor=${cursor}` : ''}`)
        seen.push(...p.data.map((r: any) => r.gateway_id))
        if (!p.next_cursor) break
        cursor = p.next_cursor
      }
      expect(seen.sort()).toEqual(rows.map((r) => r.gateway_id).sort())
    })
  })
}
