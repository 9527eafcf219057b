/**
 * The Responses pass-through, an upstream that fails before content after the status went out
 * (`stream_hold_ms` passed with only `response.created` / `.in_progress`): the client gets one
 * `error` and one `response.failed` — the stream's single ending — whether the upstream sent
 * `response.failed` alone or after an `error` event. It got the upstream's `response.failed`,
 * then the gateway's `error` and a second `response.failed`.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../../support/gateway.ts'

let gw: TestGateway
let up: ReturnType<typeof Bun.serve>
let mode: 'failed' | 'error' = 'failed'

/** OpenAI's Responses stream events, as its recordings have them (sequence numbers from 0). */
const frame = (type: string, body: Record<string, unknown>, seq: number) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...body, sequence_number: seq })}\n\n`

beforeAll(async () => {
  up = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => {
      const resp = { id: 'resp_1', object: 'response', status: 'in_progress', model: 'gpt-r', output: [] }
      const failed = { ...resp, status: 'failed', error: { code: 'server_error', message: 'boom' } }
      const enc = new TextEncoder()
      const body = new ReadableStream({
        async start(c) {
          c.enqueue(enc.encode(frame('response.created', { response: resp }, 0)))
          c.enqueue(enc.encode(frame('response.in_progress', { response: resp }, 1)))
          // Past the gateway's hold (100 ms): the 200 has gone out.
          await Bun.sleep(400)
          if (mode === 'error')
            c.enqueue(
              enc.encode(
                frame('error', { error: { type: 'server_error', code: 'server_error', message: 'boom' } }, 2),
              ),
            )
          c.enqueue(enc.encode(frame('response.failed', { response: failed }, mode === 'error' ? 3 : 2)))
          c.close()
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0, stream_hold_ms: 100 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'resp',
          kind: 'openai',
          wire: 'responses',
          base_url: `http://127.0.0.1:${up.port}/v1`,
          api_key: 'sk-x',
          retry: { attempts: 0 },
          models: [
            { name: 'gpt-r', context_window: 128_000, max_output_tokens: 4096, features: ['streaming'] },
          ],
        },
      ],
      plans: { p: { rpm: null, rpd: null, models: ['*'] } },
      default_plan: 'p',
    },
  })
})
afterAll(async () => {
  await gw?.stop()
  up?.stop(true)
})

for (const m of ['failed', 'error'] as const) {
  test(`the upstream's ${m === 'failed' ? 'response.failed' : 'error, then response.failed'}: one error, one response.failed`, async () => {
    mode = m
    const { key } = await gw.key(`a-${m}`, 'p')
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'resp/gpt-r', input: 'hi', stream: true }),
    })
    expect(res.status).toBe(200)
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('event: '))
      .map((l) => l.slice(7))
    expect(events).toEqual(['response.created', 'response.in_progress', 'error', 'response.failed'])
  })
}
