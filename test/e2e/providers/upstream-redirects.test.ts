/**
 * The provider's key goes only to its own base_url: an upstream answering with a redirect is a
 * 502 to the client, and the gateway does not follow it. Bun's fetch drops `Authorization` on a
 * cross-origin redirect but forwards `x-api-key` (Anthropic) and `x-goog-api-key` (Gemini), so
 * following one handed those keys, and the client's prompt, to whatever host the Location named.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const SECRET = 'sk-upstream-redirect-check-0123456789'
let gw: TestGateway
let key: string
let redirector: ReturnType<typeof Bun.serve>
let elsewhere: ReturnType<typeof Bun.serve>
/** Every request the host named by the redirects received. */
const reached: Array<Record<string, string>> = []

const model = { name: 'm', context_window: 8192, max_output_tokens: 1024, features: ['streaming'] }

beforeAll(async () => {
  elsewhere = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      reached.push(Object.fromEntries(req.headers))
      return Response.json({ error: { message: 'not the provider' } }, { status: 500 })
    },
  })
  // Another origin than the provider's base_url (localhost, not 127.0.0.1): a cross-origin redirect.
  redirector = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req) =>
      new Response(null, {
        status: 307,
        headers: { location: `http://localhost:${elsewhere.port}${new URL(req.url).pathname}` },
      }),
  })
  const provider = (prefix: string, kind: string) => ({
    prefix,
    kind,
    base_url: `http://127.0.0.1:${redirector.port}/v1`,
    api_key: SECRET,
    timeouts: { first_byte_ms: 5_000, idle_ms: 5_000, total_ms: 10_000 },
    models: [model],
  })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [provider('oa', 'openai'), provider('an', 'anthropic'), provider('ge', 'gemini')],
      plans: { ...PLANS, all: { rpm: null, rpd: null, models: ['*'] } },
    }),
  })
  key = (await gw.key('redirects', 'all')).key
})
afterAll(async () => {
  await gw.stop()
  redirector.stop(true)
  elsewhere.stop(true)
})

for (const prefix of ['oa', 'an', 'ge']) {
  for (const stream of [false, true]) {
    test(`${prefix}: a redirect is not followed (stream: ${stream}); 502 naming it, the key stays home`, async () => {
      reached.length = 0
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ model: `${prefix}/m`, stream, messages: [{ role: 'user', content: 'hi' }] }),
      })
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect(reached).toEqual([])
      expect(res.status).toBe(502)
      expect(body.error.code).toBe('upstream_redirect')
      expect(body.error.message).toContain(`Upstream '${prefix}' answered with a redirect (HTTP 307)`)
      expect(JSON.stringify(body)).not.toContain(`${elsewhere.port}`)
      expect(JSON.stringify(body)).not.toContain(SECRET)
    })
  }
}
