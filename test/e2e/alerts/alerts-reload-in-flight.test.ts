/**
 * A reload while a webhook is being sent (stop 63's note): the old generation's sender was
 * stopped by cutting its send, the row went back to the queue, and the new sender sent it again —
 * a receiver that had read the first got one alert twice under one id. Now the old sender
 * finishes what it has in flight (bounded by its send timeout), so each alert is sent once.
 * A graceful stop (SIGTERM's drain) likewise lets every sender finish and record its sends, an old
 * generation's still finishing included (stop 65's note): their rows were left leased, to be sent
 * again by the next process when the lease ended.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { buildDeps } from '../../../src/app/build.ts'
import { type Running, startServer } from '../../../src/app/serve.ts'
import { loadConfigFile } from '../../../src/config/index.ts'
import { createLogger } from '../../../src/util/log.ts'
import { ADMIN_TOKEN, PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { writeConfig } from '../../support/process.ts'

/** A receiver that reads each delivery, and holds the first `held` ones' answers until released. */
function holdingReceiver(held = 1) {
  const got: string[] = []
  let release: () => void = () => {}
  const released = new Promise<void>((r) => {
    release = r
  })
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const doc = JSON.parse(await req.text())
      got.push(doc.id)
      if (got.length <= held) await released
      return new Response(null, { status: 200 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hook`, got, release, stop: () => server.stop(true) }
}

let hook: ReturnType<typeof holdingReceiver>
let running: Running
let dir: string

const doc = (plan: number, hook: { url: string }) =>
  testConfigDoc({
    plans: { ...PLANS, extra: { rpm: plan, rpd: null, models: ['*'] } },
    // A retry comes 10 ms after a failed try: a second copy would be here well within the wait below.
    alerts: {
      webhooks: [{ url: hook.url, secret: 'whsec-0123456789abcdef', events: ['reload.applied'] }],
      poll_ms: 10,
      backoff_ms: 10,
      max_backoff_ms: 10,
    },
  })
const reload = async (plan: number, on: { running: Running; dir: string; hook: { url: string } }) => {
  writeConfig(on.dir, doc(plan, on.hook))
  const r = await fetch(`${on.running.url}/admin/v1/reload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  })
  expect(r.status).toBe(200)
}

beforeAll(async () => {
  hook = holdingReceiver()
  dir = tempDir()
  const config = await loadConfigFile(writeConfig(dir, doc(1, hook)))
  running = startServer(config, buildDeps(config, { log: createLogger('error') }))
})
afterAll(async () => {
  hook.release()
  await running.stop()
  await hook.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('a reload while the first delivery is held open: the old sender finishes it, and each alert is sent once', async () => {
  await reload(2, { running, dir, hook })
  // The first reload's reload.applied, held open at the receiver by the sender of generation 2...
  while (hook.got.length < 1) await Bun.sleep(5)
  // ...across a second reload, which stops that sender.
  await reload(3, { running, dir, hook })
  await Bun.sleep(200)
  hook.release()
  while (hook.got.length < 2) await Bun.sleep(5)
  // Both the first try's answer and any retry (10 ms backoff) have had time to come.
  await Bun.sleep(500)
  expect(hook.got).toHaveLength(2)
  expect(new Set(hook.got).size).toBe(2)
  const rows = await running.deps.store.listDeliveries({ beforeId: null, limit: 10 })
  expect(rows.map((d) => [d.state, d.attempts])).toEqual([
    ['delivered', 1],
    ['delivered', 1],
  ])
})

test("a graceful stop while an old generation's send and the current one's are held open: both finish and are recorded, once", async () => {
  const on = { hook: holdingReceiver(2), dir: tempDir(), running: undefined as unknown as Running }
  try {
    const config = await loadConfigFile(writeConfig(on.dir, doc(1, on.hook)))
    on.running = startServer(config, buildDeps(config, { log: createLogger('error') }))
    // Generation 2's sender holds the first reload's alert open; generation 3's the second's.
    await reload(2, on)
    while (on.hook.got.length < 1) await Bun.sleep(5)
    await reload(3, on)
    while (on.hook.got.length < 2) await Bun.sleep(5)
    // SIGTERM's drain, the receiver answering both while it runs.
    const drained = on.running.drain()
    await Bun.sleep(300)
    on.hook.release()
    await drained
    // What the next process finds in the queue: both delivered, nothing left to send again.
    const after = buildDeps(config, { log: createLogger('error') })
    const rows = await after.store.listDeliveries({ beforeId: null, limit: 10 })
    await after.store.close()
    expect(rows.map((d) => [d.state, d.attempts])).toEqual([
      ['delivered', 1],
      ['delivered', 1],
    ])
    expect(on.hook.got).toHaveLength(2)
  } finally {
    on.hook.release()
    await on.hook.stop()
    rmSync(on.dir, { recursive: true, force: true })
  }
})
