/**
 * A reload while a webhook is being sent (stop 63's note): the old generation's sender was
 * stopped by cutting its send, the row went back to the queue, and the new sender sent it again —
 * a receiver that had read the first got one alert twice under one id. Now the old sender
 * finishes what it has in flight (bounded by its send timeout), so each alert is sent once.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { buildDeps } from '../../../src/app/build.ts'
import { type Running, startServer } from '../../../src/app/serve.ts'
import { loadConfigFile } from '../../../src/config/index.ts'
import { createLogger } from '../../../src/util/log.ts'
import { ADMIN_TOKEN, PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { writeConfig } from '../../support/process.ts'

/** A receiver that reads each delivery, and holds the first one's answer until released. */
function holdingReceiver() {
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
      if (got.length === 1) await released
      return new Response(null, { status: 200 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hook`, got, release, stop: () => server.stop(true) }
}

let hook: ReturnType<typeof holdingReceiver>
let running: Running
let dir: string

const doc = (plan: number) =>
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
const reload = async (plan: number) => {
  writeConfig(dir, doc(plan))
  const r = await fetch(`${running.url}/admin/v1/reload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  })
  expect(r.status).toBe(200)
}

beforeAll(async () => {
  hook = holdingReceiver()
  dir = tempDir()
  const config = await loadConfigFile(writeConfig(dir, doc(1)))
  running = startServer(config, buildDeps(config, { log: createLogger('error') }))
})
afterAll(async () => {
  hook.release()
  await running.stop()
  await hook.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('a reload while the first delivery is held open: the old sender finishes it, and each alert is sent once', async () => {
  await reload(2)
  // The first reload's reload.applied, held open at the receiver by the sender of generation 2...
  while (hook.got.length < 1) await Bun.sleep(5)
  // ...across a second reload, which stops that sender.
  await reload(3)
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
