/**
 * Graceful shutdown of a real `serve` process (supervisor included, and with `--workers 2`):
 * SIGTERM with three slow streams open against a real OpenAI-wire mock upstream.
 */
import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type MockUpstream, startMockUpstream } from '../../scripts/mock-upstream.ts'
import { cli } from '../support/cli.ts'
import { PLANS, tempDir } from '../support/config-doc.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../support/process.ts'

/**
 * The drain each case waits out (the long streams must last it): 3 s, not 4, saves a second a case.
 * What it must hold is the rest of the short stream after SIGTERM, measured in this process.
 */
const DRAIN_S = 3
/**
 * Nine events 80 ms apart: ~0.72 s (1.36 s at 150 ms), nearly all of it after the SIGTERM (sent
 * once every stream's status has come; measured 0.61 s after it at 80 ms, 1.30 s at 150 ms, load
 * 1.4): ~2.4 s of room inside the 3 s drain on a loaded machine, near the 2.7 s the 4 s drain gave
 * the 150 ms stream, where 3 s gave it 1.7 s.
 */
const SHORT = 'slow-stream-80ms'
/** 6 chunks 5 s apart: still open when the drain ends. */
const LONG = 'slow-stream-5000ms'

const mocks: MockUpstream[] = []
const procs: ServeProcess[] = []
afterAll(async () => {
  for (const p of procs) p.proc.kill('SIGKILL')
  for (const m of mocks) await m.stop()
})

const model = (name: string) => ({
  name,
  context_window: 8192,
  max_output_tokens: 512,
  features: ['streaming'],
})

async function setup(extra: string[]) {
  const mock = await startMockUpstream({ chunks: 6 })
  mocks.push(mock)
  const dir = tempDir()
  const config = writeConfig(dir, {
    server: { host: '127.0.0.1', port: 0, drain_timeout_s: DRAIN_S, stream_hold_ms: 200 },
    usage: { flush_ms: 5000 }, // longer than the test: only the shutdown flush can write the rows
    providers: [
      {
        prefix: 'mock',
        kind: 'openai',
        base_url: mock.url,
        api_key: 'k',
        models: [model(SHORT), model(LONG)],
      },
    ],
    plans: PLANS,
    default_plan: 'unlimited',
  })
  const base = ['--config', config]
  expect((await cli(['accounts', 'create', 'acct', ...base])).code).toBe(0)
  const key = (await cli(['keys', 'create', 'acct', '--json', ...base])).json().key as string
  const serve = await spawnServe(['--port', '0', ...extra, ...base])
  procs.push(serve)
  return { serve, key, db: join(dir, 'data', 'switchyard.db') }
}

interface StreamEnd {
  text: string
  endedAt: number
}

/** Resolves once the stream is open (status 200); `end` resolves when its body ends. */
async function openStream(url: string, key: string, model: string): Promise<{ end: Promise<StreamEnd> }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: `mock/${model}`,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  })
  expect(res.status).toBe(200)
  return { end: res.text().then((text) => ({ text, endedAt: performance.now() })) }
}

// The two cases run concurrently, each on its own server and upstream: each waits out its drain
// (DRAIN_S), idle, and those waits overlap.
describe.each([[[]], [['--workers', '2']]])('SIGTERM drains (serve %p)', (extra) => {
  test.concurrent('short stream finishes, long ones end with shutting_down after the drain, new requests 503, exit 0, rows say which', async () => {
    const { serve, key, db } = await setup(extra as string[])
    const streams = await Promise.all([
      openStream(serve.url, key, SHORT),
      openStream(serve.url, key, LONG),
      openStream(serve.url, key, LONG),
    ])
    const t0 = performance.now()
    serve.proc.kill('SIGTERM')
    await Bun.sleep(300)
    const refused = await fetch(`${serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: `mock/${SHORT}`, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(refused.status).toBe(503)
    expect(((await refused.json()) as any).error.code).toBe('shutting_down')

    const [short, long1, long2] = await Promise.all(streams.map((s) => s.end))
    expect(short!.text).toContain('data: [DONE]')
    expect(short!.text).not.toContain('shutting_down')
    // Finished inside the drain: before the drain's end cut the long ones (an order, not a
    // duration a loaded machine stretches).
    expect(short!.endedAt).toBeLessThan(Math.min(long1!.endedAt, long2!.endedAt))
    for (const s of [long1!, long2!]) {
      expect(s.text).not.toContain('[DONE]')
      const last = s.text.trim().split('\n\n').at(-1)!
      expect(JSON.parse(last.slice('data: '.length)).error.code).toBe('shutting_down')
      expect(s.endedAt - t0).toBeGreaterThanOrEqual(DRAIN_S * 1000 - 100)
    }
    expect(await serve.proc.exited).toBe(0)
    // Exited soon after the drain, not when the long streams would have ended (their last chunk
    // ~25 s after the SIGTERM): the healthy exit is ~DRAIN_S + 1 s, a loaded machine's a few more.
    expect(performance.now() - t0).toBeLessThan(20_000)

    const rows = new Database(db, { readonly: true })
      .query('SELECT model, status, error_code FROM requests ORDER BY model, id')
      .all() as Array<{ model: string; status: number; error_code: string | null }>
    // By model name: `slow-stream-5000ms` sorts before `slow-stream-80ms`.
    expect(rows).toEqual([
      { model: `mock/${LONG}`, status: 503, error_code: 'shutting_down' },
      { model: `mock/${LONG}`, status: 503, error_code: 'shutting_down' },
      { model: `mock/${SHORT}`, status: 200, error_code: null },
    ])
  }, 30_000)
})
