/**
 * `serve --workers N` as a real process tree (supervisor → primary → workers) with a worker killed
 * by SIGKILL for real: it is logged and restarted, `/metrics` drops its gauges at once and keeps
 * its counters (none goes backwards), a stop during the restart still ends every process, a
 * worker that keeps dying as soon as it starts ends the server with exit 1, and one that cannot
 * start at all fails the start (worker_failed).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { adminPost } from '../../support/admin-api.ts'
import { PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { type GatedUpstream, startGatedUpstream } from '../../support/gated-upstream.ts'
import {
  childProcesses,
  type ServeProcess,
  spawnServe,
  UNSUPERVISED,
  writeConfig,
} from '../../support/process.ts'

/**
 * Streams hold after their first half until the test opens the gate: every stream is open for the
 * whole of a test's checks however slow the machine, and none waits on a clock to begin.
 */
const SLOW = 'held-stream'

const mocks: GatedUpstream[] = []
const procs: ServeProcess[] = []
const dirs: string[] = []
afterAll(async () => {
  for (const p of procs) p.proc.kill('SIGKILL')
  for (const d of dirs) for (const pid of processesOf(d)) process.kill(pid, 'SIGKILL')
  for (const m of mocks) await m.stop()
})

interface Server {
  serve: ServeProcess
  upstream: GatedUpstream
  config: string
  dir: string
  /** Everything the process tree has written to stderr so far. */
  stderr: () => string
}

/**
 * `serve --workers N` for a test; `supervised: false` runs the serving process (the primary)
 * without the supervisor above it (UNSUPERVISED), for tests whose subject is the primary's own
 * supervision of its workers: one process start fewer. No account or key: the test that sends
 * requests makes its own through the admin API (the stops and restarts need none).
 */
async function start(workers: number, { supervised = true } = {}): Promise<Server> {
  const mock = await startGatedUpstream()
  mocks.push(mock)
  const dir = tempDir()
  dirs.push(dir)
  const config = writeConfig(
    dir,
    testConfigDoc({
      server: { host: '127.0.0.1', port: 0, drain_timeout_s: 1 },
      providers: [
        {
          prefix: 'mock',
          kind: 'openai',
          base_url: `${mock.url}/v1`,
          api_key: 'k',
          models: [{ name: SLOW, context_window: 8192, max_output_tokens: 512, features: ['streaming'] }],
        },
      ],
      plans: PLANS,
      default_plan: 'unlimited',
    }),
  )
  const serve = await spawnServe(['--workers', String(workers), '--port', '0', '--config', config], {
    env: supervised ? {} : UNSUPERVISED,
  })
  procs.push(serve)
  let stderr = ''
  void (async () => {
    for await (const chunk of serve.proc.stderr as ReadableStream<Uint8Array>) {
      stderr += new TextDecoder().decode(chunk)
    }
  })()
  return { serve, upstream: mock, config, dir, stderr: () => stderr }
}

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

async function workerPids(primary: number): Promise<number[]> {
  return (await childProcesses(primary)).filter((c) => c.cmd.includes('--worker-child')).map((c) => c.pid)
}

/** Polls `check` every 50 ms for up to `ms`; returns its last value. */
async function until<T>(ms: number, check: () => Promise<T> | T, ok: (v: T) => boolean): Promise<T> {
  const deadline = performance.now() + ms
  for (;;) {
    const v = await check()
    if (ok(v) || performance.now() > deadline) return v
    await Bun.sleep(50)
  }
}

interface Scrape {
  /** Every sample, by `name{labels}`. */
  values: Map<string, number>
  /** The samples of counters and histograms: what must never go backwards. */
  monotonic: Map<string, number>
}

function parseMetrics(text: string): Scrape {
  const types = new Map<string, string>()
  const values = new Map<string, number>()
  const monotonic = new Map<string, number>()
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (type) types.set(type[1]!, type[2]!)
    if (!line || line.startsWith('#')) continue
    const m = /^([a-z_]+)(\{.*\})? (\S+)$/.exec(line)!
    const series = `${m[1]}${m[2] ?? ''}`
    values.set(series, Number(m[3]))
    const family = m[1]!.replace(/_(bucket|sum|count)$/, '')
    if (types.get(m[1]!) === 'counter' || types.get(family) === 'histogram')
      monotonic.set(series, Number(m[3]))
  }
  return { values, monotonic }
}

async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`, { headers: { connection: 'close' } })
  expect(res.status).toBe(200)
  return parseMetrics(await res.text())
}

/** Throws naming the first counter or histogram sample of `before` that `after` is below. */
function expectNoneBackwards(before: Scrape, after: Scrape): void {
  for (const [series, v] of before.monotonic) {
    const now = after.monotonic.get(series) ?? 0
    if (now < v) throw new Error(`${series} went back from ${v} to ${now}`)
  }
}

/**
 * `/healthz` then `/metrics` on one keep-alive connection, so both come from the same process:
 * the scrape that process answered and its pid.
 */
function scrapeOneProcess(port: number): Promise<{ pid: number; scrape: Scrape }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0)
    let pid = 0
    const socket = connect(port, '127.0.0.1', () =>
      socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
    )
    socket.on('error', reject)
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d])
      const head = buf.indexOf('\r\n\r\n')
      if (head < 0) return
      const length = Number(/content-length: (\d+)/i.exec(buf.subarray(0, head).toString())?.[1])
      if (buf.length < head + 4 + length) return
      const body = buf.subarray(head + 4, head + 4 + length).toString()
      buf = buf.subarray(head + 4 + length)
      if (pid === 0) {
        pid = JSON.parse(body).pid
        socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
      } else {
        socket.destroy()
        resolve({ pid, scrape: parseMetrics(body) })
      }
    })
  })
}

interface Stream {
  /** The connection was cut (its process died). */
  cut: boolean
}

async function openStream(url: string, key: string): Promise<Stream> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: `mock/${SLOW}`,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  })
  expect(res.status).toBe(200)
  const s: Stream = { cut: false }
  const reader = res.body!.getReader()
  void (async () => {
    try {
      while (!(await reader.read()).done) {
        // reading until it ends
      }
    } catch {
      s.cut = true
    }
  })()
  return s
}

async function chat(url: string, key: string, n: number): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async () => {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ model: `mock/${SLOW}`, messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(res.status).toBe(200)
      await res.arrayBuffer()
    }),
  )
}

const gauge = (s: Scrape, name: string) => s.values.get(name)

// Every test runs concurrently, each on a server of its own (its own upstream, config, database
// and process tree, found by its own directory; nothing is cleaned up until the file ends): their
// time is start-ups and restart backoffs, mostly waiting, which overlap. Their timeouts allow for
// eight servers starting at once on a loaded machine.
describe('serve --workers 3: a worker killed with SIGKILL', () => {
  test.concurrent('is logged and restarted; /metrics drops its gauges at once and no counter goes backwards', async () => {
    const { serve, upstream, dir, stderr } = await start(3, { supervised: false })
    await adminPost(serve.url, '/accounts', { name: 'acct' })
    const { key } = await adminPost(serve.url, '/keys', { account: 'acct' })
    const before = await workerPids(serve.pid)
    expect(before).toHaveLength(2)
    const open = upstream.hold()

    // 24 streams over three processes: the one killed holds some (all but surely).
    const streams = await Promise.all(Array.from({ length: 24 }, () => openStream(serve.url, key)))
    const opened = await until(
      10_000,
      () => scrape(serve.url),
      (s) => gauge(s, 'switchyard_open_streams') === 24,
    )
    expect(gauge(opened, 'switchyard_open_streams')).toBe(24)
    expect(gauge(opened, 'switchyard_processes')).toBe(3)
    // One answered by the primary: it has collected every worker's figures, open streams included.
    const byPrimary = await until(
      10_000,
      () => scrapeOneProcess(serve.port),
      (r) => r.pid === serve.pid,
    )
    expect(byPrimary.pid).toBe(serve.pid)
    expect(gauge(byPrimary.scrape, 'switchyard_open_streams')).toBe(24)

    // Requests since the last collect, then a scrape answered by a worker itself: what that worker
    // showed must survive its death.
    await chat(serve.url, key, 30)
    const seen = await until(
      10_000,
      () => scrapeOneProcess(serve.port),
      (r) => before.includes(r.pid),
    )
    expect(before).toContain(seen.pid)
    const victim = seen.pid

    process.kill(victim, 'SIGKILL')
    await until(
      5_000,
      () => streams.filter((s) => s.cut).length,
      (n) => n > 0,
    )

    // Every scrape from now on: the dead worker's streams are not counted, nothing went back.
    let last = seen.scrape
    const check = async () => {
      const s = await scrape(serve.url)
      expectNoneBackwards(last, s)
      last = s
      const open = streams.filter((x) => !x.cut).length
      expect(gauge(s, 'switchyard_open_streams')).toBe(open)
      return s
    }
    const restarted = await until(
      20_000,
      async () => ({ scrape: await check(), workers: await workerPids(serve.pid) }),
      (r) => r.workers.length === 2 && gauge(r.scrape, 'switchyard_processes') === 3,
    )
    expect(restarted.workers).toHaveLength(2)
    expect(restarted.workers).not.toContain(victim)
    expect(gauge(restarted.scrape, 'switchyard_processes')).toBe(3)
    const cut = streams.filter((s) => s.cut).length
    expect(cut).toBeGreaterThan(0)
    expect(cut).toBeLessThan(24)
    for (let i = 0; i < 6; i++) await check()

    // The new worker serves and its requests add to the totals the dead one left.
    const total = (s: Scrape) =>
      [...s.values].filter(([k]) => k.startsWith('switchyard_requests_total{')).reduce((n, [, v]) => n + v, 0)
    const atRestart = total(last)
    await chat(serve.url, key, 15)
    const after = await until(5_000, check, (s) => total(s) >= atRestart + 15)
    expect(total(after)).toBe(atRestart + 15)

    const logged = stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
    const died = logged.find((l) => l.msg?.includes('exited unexpectedly'))
    expect(died).toMatchObject({ level: 'error', pid: victim, signal: 'SIGKILL', exit_code: null })
    expect(logged.find((l) => l.msg === 'worker process restarted')).toMatchObject({ replaces: victim })

    // The streams end, so the stop below drains at once rather than waiting out drain_timeout_s.
    open()
    serve.proc.kill('SIGTERM')
    expect(await serve.proc.exited).toBe(0)
    expect(
      await until(
        5_000,
        () => processesOf(dir),
        (p) => p.length === 0,
      ),
    ).toEqual([])
  }, 90_000)
})

describe.each([
  ['SIGTERM to the supervisor: drains and exits 0', 'supervisor', 'SIGTERM', 0],
  ['SIGKILL to the supervisor', 'supervisor', 'SIGKILL', null],
  ['SIGKILL to the primary: the supervisor exits 137', 'primary', 'SIGKILL', 137],
] as const)('a stop while a worker is being restarted (%s)', (_name, target, signal, code) => {
  test.concurrent.each([0, 300])(
    '%d ms after the worker died: every process of the server exits',
    async (wait) => {
      const { serve, dir } = await start(2)
      const [victim] = await workerPids(serve.pid)
      process.kill(victim!, 'SIGKILL')
      await Bun.sleep(wait)
      if (target === 'supervisor') serve.proc.kill(signal)
      else process.kill(serve.pid, signal)
      const exit = await serve.proc.exited
      if (code !== null) expect(exit).toBe(code)
      expect(
        await until(
          10_000,
          () => processesOf(dir),
          (p) => p.length === 0,
        ),
      ).toEqual([])
    },
    90_000,
  )
})

test.concurrent('a worker that keeps dying as soon as it starts: five restarts, then the server drains and exits 1', async () => {
  const { serve, config, dir, stderr } = await start(2, { supervised: false })
  const [victim] = await workerPids(serve.pid)
  // Every worker started from now on reads this and exits at once.
  writeFileSync(config, 'server: [not, a, mapping\n')
  process.kill(victim!, 'SIGKILL')
  expect(await serve.proc.exited).toBe(1)
  expect(
    await until(
      10_000,
      () => processesOf(dir),
      (p) => p.length === 0,
    ),
  ).toEqual([])
  const lines = stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
  const restarts = lines.filter((l) => l.msg?.includes('exited unexpectedly')).map((l) => l.restart_in_ms)
  expect(restarts).toEqual([100, 200, 400, 800, 1600])
  expect(lines.find((l) => l.msg?.includes('giving up'))).toMatchObject({ level: 'error' })
}, 90_000)

test.concurrent('a worker that cannot start at all (its config is a pipe only the primary could read): worker_failed, exit 1, nothing left', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const config = writeConfig(
    dir,
    // The database's path absolute: a relative one would be the config's folder's, /dev/fd.
    testConfigDoc({ database: { path: `${dir}/switchyard.db` } }),
  )
  // A shell's process substitution: the primary reads /dev/fd/63 (a pipe, readable once, an fd of
  // its own); a worker, started by it, has no such fd and exits before it listens.
  const started = spawnServe(['--workers', '2', '--port', '0'], {
    env: UNSUPERVISED,
    wrap: ['bash', '-c', 'exec "$@" --config <(cat "$0")', config],
  })
  const failed = await started.then(
    (s) => {
      procs.push(s)
      return null
    },
    (e: Error) => e.message,
  )
  expect(failed).toStartWith('serve exited (code 1)')
  // The worker's own reason, then the primary's refusal (--json: the error object, code worker_failed).
  expect(failed).toMatch(/invalid config \/dev\/fd\/\d+:\n {2}\/: file not found/)
  const refusal = JSON.parse(failed!.slice(failed!.lastIndexOf('{"error"')))
  expect(refusal.error).toMatchObject({
    code: 'worker_failed',
    message: 'a worker exited before listening (exit code 1)',
  })
  // No process of this server is left: the primary ended before it announced anything.
  expect(processesOf(dir)).toEqual([])
}, 90_000)
