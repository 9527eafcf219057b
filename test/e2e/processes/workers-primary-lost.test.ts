/**
 * `serve --workers 2` whose primary is killed with SIGKILL for real. A worker exits when its
 * primary dies (its stdin pipe closes), but it exited on the spot with `process.exit(0)`: its
 * streams in flight were cut and the usage it had not flushed yet — the request log rows, tokens
 * and latencies of every request it had answered in the last `usage.flush_ms` — was lost with it,
 * though nothing killed it. Now it stops as on SIGTERM: no new requests, those in flight finish,
 * usage flushed, then it exits. The `serve` that was started still exits 137.
 */
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type MockUpstream, startMockUpstream } from '../../../scripts/mock-upstream.ts'
import { adminPost } from '../../support/admin-api.ts'
import { DEMO_PROVIDER, PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../../support/process.ts'

/** Six chunks 400 ms apart: every stream is open when the primary dies. */
const SLOW = 'slow-stream-400ms'

const mocks: MockUpstream[] = []
const procs: ServeProcess[] = []
const dirs: string[] = []
afterAll(async () => {
  for (const p of procs) p.proc.kill('SIGKILL')
  for (const d of dirs) for (const pid of processesOf(d)) process.kill(pid, 'SIGKILL')
  for (const m of mocks) await m.stop()
})

/** Live processes (zombies excluded) whose command line names `dir`: the whole tree of one server. */
function processesOf(dir: string): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      const state = /State:\s+(\S)/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]
      if (cmd.includes(dir) && state !== 'Z') out.push(Number(entry))
    } catch {
      // exited while we looked
    }
  }
  return out
}

interface Stream {
  done: boolean
  cut: boolean
}

async function openStream(url: string, key: string): Promise<Stream> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({
      model: `mock/${SLOW}`,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  })
  expect(res.status).toBe(200)
  const s: Stream = { done: false, cut: false }
  void (async () => {
    let text = ''
    try {
      for await (const chunk of res.body as ReadableStream<Uint8Array>)
        text += new TextDecoder().decode(chunk)
      s.done = text.includes('data: [DONE]')
      s.cut = !s.done
    } catch {
      s.cut = true
    }
  })()
  return s
}

test('the primary killed with SIGKILL: its worker finishes its streams and flushes its usage before it exits; serve exits 137', async () => {
  const mock = await startMockUpstream({ chunks: 6 })
  mocks.push(mock)
  const dir = tempDir()
  dirs.push(dir)
  const config = writeConfig(
    dir,
    testConfigDoc({
      server: { host: '127.0.0.1', port: 0, drain_timeout_s: 20 },
      // Nothing is flushed on the timer during the test: what reaches the database is what a
      // process wrote on its way out.
      usage: { flush_ms: 600_000 },
      providers: [
        DEMO_PROVIDER,
        {
          prefix: 'mock',
          kind: 'openai',
          base_url: mock.url,
          api_key: 'k',
          models: [{ name: SLOW, context_window: 8192, max_output_tokens: 512, features: ['streaming'] }],
        },
      ],
      plans: PLANS,
      default_plan: 'unlimited',
    }),
  )
  const serve = await spawnServe(['--workers', '2', '--port', '0', '--config', config])
  procs.push(serve)
  // Through the admin API: a request, not two CLI processes before the start.
  await adminPost(serve.url, '/accounts', { name: 'acct', plan: 'unlimited' })
  const { key } = await adminPost(serve.url, '/keys', { account: 'acct' })

  // Answered requests, one connection each, so the kernel spreads them over both processes.
  const answered = 20
  for (let i = 0; i < answered; i++) {
    const res = await fetch(`${serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: `hello ${i}` }] }),
    })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
  }
  const streams = await Promise.all(Array.from({ length: 8 }, () => openStream(serve.url, key)))

  // The primary (the serving process), not the supervisor above it: its status is the supervisor's.
  expect(await serve.crash()).toBe(137)
  const deadline = performance.now() + 15_000
  while (processesOf(dir).length > 0 && performance.now() < deadline) await Bun.sleep(50)
  expect(processesOf(dir)).toEqual([])
  // The readers see the ends of their streams (every process is gone: each is cut or done).
  while (streams.some((s) => !s.done && !s.cut) && performance.now() < deadline) await Bun.sleep(10)

  // The primary's streams were cut with it; the worker's ran to their end.
  const finished = streams.filter((s) => s.done).length
  expect(finished + streams.filter((s) => s.cut).length).toBe(8)
  expect(finished).toBeGreaterThan(0)

  // What the worker answered is in the request log: its streams, with their tokens, and its share
  // of the answered requests (the primary's were lost with it, as `kill -9` loses).
  const db = new Database(join(dir, 'data', 'switchyard.db'), { readonly: true })
  const rows = db.query('SELECT stream, status, completion_tokens FROM requests').all() as Array<{
    stream: number
    status: number
    completion_tokens: number | null
  }>
  db.close()
  const streamed = rows.filter((r) => r.stream === 1)
  expect(streamed).toHaveLength(finished)
  for (const r of streamed) expect(r).toMatchObject({ status: 200, completion_tokens: expect.any(Number) })
  const plain = rows.filter((r) => r.stream === 0)
  expect(plain.length).toBeGreaterThan(0)
  expect(plain.length).toBeLessThan(answered)
}, 60_000)
