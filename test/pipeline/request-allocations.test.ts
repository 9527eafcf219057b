/**
 * Issue 46 (what a request allocates): a plain request made two ReadableStreams it never read from
 * — `request.body` looked at before the client's declared body was read with `bytes()`, and
 * `res.body` looked at before the upstream's declared answer was read with `text()`. Each getter
 * builds a stream and its native source (4 of a plain request's ~400 cells). Counted with
 * JSC's cell counts, which see every cell allocated since the last collection: no timing. And
 * steps that were `async` on every request though they wait only now and then (a key not yet
 * cached, an input count still loading) answer without a promise when they need none.
 */

import { heapStats } from 'bun:jsc'
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { buildDeps } from '../../src/app/build.ts'
import { authenticateNow } from '../../src/auth/authenticate.ts'
import { parseConfig } from '../../src/config/index.ts'
import type { ProviderConfig } from '../../src/config/schema.ts'
import { readBodyText } from '../../src/pipeline/body.ts'
import { planCharge } from '../../src/pipeline/charge.ts'
import { readText, upstreamFetch } from '../../src/providers/http.ts'
import { GatewayError } from '../../src/util/errors.ts'
import { silentLogger } from '../../src/util/log.ts'
import { callContext } from '../providers/helpers.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'

const streams = () => heapStats().objectTypeCounts.ReadableStream ?? 0
const N = 40

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    if (req.method === 'GET') return Response.json({ id: 'x', choices: [], usage: null })
    return new Response(await readBodyText(req, 1 << 20, 60_000))
  },
})
afterAll(() => server.stop(true))

test('a declared request body is read whole without its ReadableStream', async () => {
  // Warm: the first requests load code and may build streams of their own.
  for (let i = 0; i < 5; i++) await fetch(server.url, { method: 'POST', body: '{}' })
  Bun.gc(true)
  const before = streams()
  for (let i = 0; i < N; i++) {
    const body = JSON.stringify({ i, text: 'x'.repeat(100) })
    const res = await fetch(server.url, { method: 'POST', body })
    expect(await res.text()).toBe(body)
  }
  // Main built one a request (≥ 40).
  expect(streams() - before).toBeLessThan(N / 2)
})

test("an upstream's declared answer is read whole without its ReadableStream", async () => {
  const provider = {
    prefix: 'up',
    kind: 'openai',
    models: [{ name: 'm', context_window: 1000, max_output_tokens: 100, features: [] }],
  } as unknown as ProviderConfig
  const ctx = callContext(provider)
  const refuse = (status: number) => new GatewayError(status, 'x', 'refused')
  const read = async () => readText(await upstreamFetch(server.url.href, { method: 'GET' }, ctx, refuse), ctx)
  for (let i = 0; i < 5; i++) await read()
  Bun.gc(true)
  const before = streams()
  for (let i = 0; i < N; i++) expect(JSON.parse(await read())).toMatchObject({ id: 'x' })
  // Main built one an answer (≥ 40).
  expect(streams() - before).toBeLessThan(N / 2)
})

test('a cached key is authenticated, and a plain plan charged, without a promise', async () => {
  const config = parseConfig(testConfigDoc({ database: { path: join(tempDir(), 'auth.db') } }), 'test')
  const deps = buildDeps(config, { log: silentLogger })
  try {
    await deps.accounts.createAccount('acme', 'unlimited')
    const { key } = await deps.accounts.createKey('acme')
    // The first read of a key waits on the store; the next ones are the cache's.
    const first = authenticateNow(deps, key)
    expect(first).toBeInstanceOf(Promise)
    expect((await first).account.name).toBe('acme')
    const auth = authenticateNow(deps, key)
    expect(auth).not.toBeInstanceOf(Promise)
    expect((auth as Awaited<typeof first>).plan.name).toBe('unlimited')
    // An unknown key once looked up: refused at once (401), a throw rather than a rejection.
    const unknown = `${key.slice(0, -4)}zzzz`
    await Promise.resolve(authenticateNow(deps, unknown)).catch(() => {})
    expect(() => authenticateNow(deps, unknown)).toThrow(expect.objectContaining({ status: 401 }))
    // A plan with no token, money or context limit: the charge plan at once (main: a promise).
    const entry = deps.catalogue.model('demo/echo')!
    const planned = planCharge(auth as Awaited<typeof first>, entry, { messages: [] }, [entry], 'messages')
    expect(planned).not.toBeInstanceOf(Promise)
    expect(planned).toMatchObject({ charge: undefined, choices: 1 })
  } finally {
    await deps.recorder.flush()
    await deps.store.close()
  }
})
