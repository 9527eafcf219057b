/**
 * Another process holding SQLite's write lock must not stall the gateway: the event loop never
 * busy-waits on the lock, `/healthz` never touches it, and a request that needs the lock waits
 * for it (asynchronously) only until its own deadline, then gets 503 store_busy.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cli } from '../../support/cli.ts'
import { PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { type Control, probePair, startControl } from '../../support/control-probe.ts'
import { afterEach } from '../../support/hooks.ts'
import { holdWriteLock } from '../../support/lock.ts'
import { type ServeProcess, spawnServe, UNSUPERVISED, writeConfig } from '../../support/process.ts'

const running: ServeProcess[] = []
let control: Control | undefined
afterEach(async () => {
  for (const p of running.splice(0)) await p.kill('SIGKILL')
  control?.stop()
  control = undefined
})

const chat = (url: string, key: string) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
  })

describe('another process holds the write lock for 5 s', () => {
  test('/healthz answers within 100 ms of an idle server throughout; a chat request gets 503 store_busy at its deadline, then is served', async () => {
    const dir = tempDir()
    const doc = testConfigDoc({ plans: PLANS, database: { busy_timeout_ms: 1500 } })
    const base = ['--config', writeConfig(dir, doc), '--db', join(dir, 'sy.db')]
    expect((await cli(['accounts', 'create', 'acct', '--plan', 'unlimited', ...base])).code).toBe(0)
    const key = (await cli(['keys', 'create', 'acct', '--json', ...base])).json().key as string
    // The serving process alone (UNSUPERVISED): one start, and the clean-up's SIGKILL ends it
    // rather than its supervisor, which left it to drain on its own.
    const p = await spawnServe(['--port', '0', ...base], { env: UNSUPERVISED })
    running.push(p)
    control = await startControl()
    expect((await chat(p.url, key)).status).toBe(200)

    const lock = await holdWriteLock(join(dir, 'sy.db'), 5000)
    const t0 = performance.now()
    // Requests that need the lock while it is held: each waits at most busy_timeout_ms.
    const blocked = Array.from({ length: 3 }, () =>
      chat(p.url, key).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as any,
        ms: performance.now() - t0,
        retry: r.headers.get('retry-after'),
      })),
    )
    // Each sample: the gateway's /healthz beyond an idle control server probed just after it (on
    // a loaded machine both wait for a core; only the gateway would wait on the lock).
    const samples: number[] = []
    while (performance.now() - t0 < 4500) {
      const [gwMs, idleMs] = await probePair(p.url, control.url)
      samples.push(gwMs - idleMs)
      await Bun.sleep(50)
    }
    samples.sort((a, b) => a - b)
    console.log(
      `healthz under a held write lock, beyond an idle server: ${samples.length} samples, median ${samples[samples.length >> 1]!.toFixed(1)} ms, max ${samples.at(-1)!.toFixed(1)} ms`,
    )
    for (const r of await Promise.all(blocked)) {
      expect(r.status).toBe(503)
      expect(r.body.error.code).toBe('store_busy')
      expect(r.retry).toBe('1')
      expect(r.ms).toBeGreaterThan(1300)
      expect(r.ms).toBeLessThan(4000)
    }
    await lock.released
    expect((await chat(p.url, key)).status).toBe(200)

    // A loaded 2-core CI machine may stall a few samples past 100 ms (CI once saw a second-worst
    // of 107 ms); a loop waiting on the lock would hold a sample for each blocked request's whole
    // busy wait (over 1.3 s, above), and a loop retrying it in short waits would slow most of them.
    expect(samples.length).toBeGreaterThan(10)
    expect(samples.at(-4)!).toBeLessThan(100)
    expect(samples.at(-1)!).toBeLessThan(1000)
  }, 30_000)
})
