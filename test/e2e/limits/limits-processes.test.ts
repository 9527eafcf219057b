import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cli } from '../../support/cli.ts'
import { PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { afterEach } from '../../support/hooks.ts'
import {
  childProcesses,
  databaseConnections,
  type ServeProcess,
  spawnServe,
  UNSUPERVISED,
  writeConfig,
} from '../../support/process.ts'

const running: ServeProcess[] = []
afterEach(async () => {
  for (const p of running.splice(0)) await p.kill('SIGKILL')
})

async function setup(rpm: number) {
  const dir = tempDir()
  const config = writeConfig(
    dir,
    testConfigDoc({ plans: { ...PLANS, burst: { rpm, rpd: null, models: ['*'] } } }),
  )
  const db = join(dir, 'shared.db')
  const base = ['--config', config, '--db', db]
  expect((await cli(['accounts', 'create', 'acct', '--plan', 'burst', ...base])).code).toBe(0)
  const keys = [
    (await cli(['keys', 'create', 'acct', '--json', ...base])).json().key,
    (await cli(['keys', 'create', 'acct', '--json', ...base])).json().key,
  ]
  return { base, db, keys: keys as [string, string] }
}

function burst(url: string, key: string, n: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: n }, () =>
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
      }).then(async (r) => {
        await r.arrayBuffer()
        return r.status
      }),
    ),
  )
}

const count = (xs: number[], s: number) => xs.filter((x) => x === s).length

// Each `serve` without the supervisor (UNSUPERVISED: its subject is elsewhere): `pid` is `proc`,
// one process start less.
describe('exact limits across processes sharing one database', () => {
  test('serve --workers 2: two processes on one port, two clients bursting → exactly rpm admitted', async () => {
    const { base, keys } = await setup(10)
    const p = await spawnServe(['--workers', '2', '--port', '0', ...base], { env: UNSUPERVISED })
    running.push(p)
    const children = await childProcesses(p.pid)
    expect(children.filter((c) => c.cmd.includes('--worker-child'))).toHaveLength(1)
    // Both processes accept connections on the shared port.
    const pids = new Set<number>()
    for (let i = 0; i < 60 && pids.size < 2; i++) {
      const h = (await (await fetch(`${p.url}/healthz`, { headers: { connection: 'close' } })).json()) as any
      pids.add(h.pid)
    }
    expect(pids.size).toBe(2)
    const [a, b] = await Promise.all([burst(p.url, keys[0], 40), burst(p.url, keys[1], 40)])
    const all = [...a, ...b]
    expect(count(all, 200)).toBe(10)
    expect(count(all, 429)).toBe(70)
    // A worker does not outlive its primary, even when the primary (the serving process, not the
    // supervisor above it) is SIGKILLed.
    const worker = children.find((c) => c.cmd.includes('--worker-child'))!
    await p.crash()
    let alive = true
    for (let i = 0; i < 50 && alive; i++) {
      await Bun.sleep(100)
      // Read once: the process can go between a check that the file exists and the read.
      const status = await Bun.file(`/proc/${worker.pid}/status`)
        .text()
        .catch(() => null)
      alive = status !== null && !status.includes('State:\tZ')
    }
    expect(alive).toBe(false)
  })

  test('two separate serve processes on one database file → exactly rpm admitted', async () => {
    const { base, keys } = await setup(15)
    const [p1, p2] = await Promise.all([
      spawnServe(['--port', '0', ...base], { env: UNSUPERVISED }),
      spawnServe(['--port', '0', ...base], { env: UNSUPERVISED }),
    ])
    running.push(p1, p2)
    const [a, b] = await Promise.all([burst(p1.url, keys[0], 30), burst(p2.url, keys[1], 30)])
    expect(count([...a, ...b], 200)).toBe(15)
  })

  test('SIGKILL in the middle of a burst: admitted requests still count after restart, nothing over-admitted', async () => {
    const { base, db, keys } = await setup(40)
    const p = await spawnServe(['--port', '0', ...base], { env: UNSUPERVISED })
    // The usage flush runs on its writer thread (the bundle serves it as the binary does): the
    // loop's connection, the checkpoint thread's and the writer's.
    for (let i = 0; i < 200 && databaseConnections(p.pid, db) < 3; i++) await Bun.sleep(10)
    expect(databaseConnections(p.pid, db)).toBe(3)
    // Four clients, each sending one request after another until the gateway is gone; the
    // serving process (crash(): under a supervisor, its SIGKILL would stop this one drained) is
    // killed on the 10th 200, so the kill lands with requests in flight (a fixed delay landed
    // before the first answer, or after the last, on a loaded machine).
    const statuses: number[] = []
    let killed: Promise<number> | null = null
    const client = async (key: string) => {
      while (!killed) {
        const s = await burst(p.url, key, 1).catch(() => [-1])
        statuses.push(...s)
        if (!killed && count(statuses, 200) >= 10) killed = p.crash()
      }
    }
    await Promise.all([0, 1, 2, 3].map((i) => client(keys[i % 2]!)))
    await killed
    const okBefore = count(statuses, 200)
    const restarted = await spawnServe(['--port', '0', ...base], { env: UNSUPERVISED })
    running.push(restarted)
    const usage = (await (
      await fetch(`${restarted.url}/v1/usage`, { headers: { authorization: `Bearer ${keys[0]}` } })
    ).json()) as any
    const usedAtRestart = usage.rate_limits.minute.used
    // Every 200 the clients saw was admitted and persisted (more may have been admitted
    // whose answer the kill cut off).
    expect(usedAtRestart).toBeGreaterThanOrEqual(okBefore)
    expect(usedAtRestart).toBeLessThanOrEqual(40)
    const after = await burst(restarted.url, keys[1], 60)
    expect(count(after, 200)).toBe(40 - usedAtRestart)
    expect(okBefore + count(after, 200)).toBeLessThanOrEqual(40)
  })
})
