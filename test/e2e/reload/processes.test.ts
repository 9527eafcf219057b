/**
 * Live reload of a real `serve --workers 2` process tree (supervisor → primary → worker), by
 * `switchyard reload` and by SIGHUP to the process the operator started: each with a stream in
 * flight that finishes whole, and every process serving the new model when the reload is done;
 * each reload's `reload.applied` webhook is sent once, not once per process.
 * The only file here that spawns a server (the suite's slowest kind of test): keep it so.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { cli } from '../../support/cli.ts'
import { PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import {
  FIRST,
  type GatedUpstream,
  SECOND,
  startGatedUpstream,
  streamText,
} from '../../support/gated-upstream.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../../support/process.ts'
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../support/webhook-receiver.ts'

let up: GatedUpstream
let hook: WebhookReceiver
const SECRET = 'whsec-reload-0123456789abcdef'
let serve: ServeProcess
let dir: string
let config: string
let key: string
let stderr = ''

const model = (name: string) => ({
  name,
  context_window: 8192,
  max_output_tokens: 512,
  features: ['streaming'],
})
const doc = (models: string[]) =>
  testConfigDoc({
    server: { host: '127.0.0.1', port: 0, drain_timeout_s: 1 },
    providers: [
      { prefix: 'up', kind: 'openai', base_url: `${up.url}/v1`, api_key: 'k', models: models.map(model) },
    ],
    plans: PLANS,
    default_plan: 'unlimited',
    alerts: { webhooks: [{ url: hook.url, secret: SECRET, events: ['reload.applied'] }], poll_ms: 20 },
  })

/** A new connection each time: the kernel spreads them over both processes. */
const chat = (m: string, stream = false) =>
  fetch(`${serve.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: m, messages: [{ role: 'user', content: 'hi' }], stream }),
    keepalive: false,
  })

/** 16 requests on 16 connections: were one process still on the old file, about half would be 404. */
async function everyProcessServes(m: string): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < 16; i++) statuses.push((await chat(m)).status)
  return statuses
}

/** A stream admitted and held at the upstream: in flight in one of the processes. */
async function streamInFlight(): Promise<{ res: Response; open: () => void }> {
  const open = up.hold()
  const res = await chat('up/m0', true)
  expect(res.status).toBe(200)
  while (up.waiting < 1) await Bun.sleep(10)
  return { res, open }
}

beforeAll(async () => {
  up = await startGatedUpstream()
  hook = startWebhookReceiver()
  dir = tempDir()
  config = writeConfig(dir, doc(['m0']))
  expect((await cli(['accounts', 'create', 'acct', '--config', config])).code).toBe(0)
  key = (await cli(['keys', 'create', 'acct', '--json', '--config', config])).json().key
  serve = await spawnServe(['--workers', '2', '--port', '0', '--config', config])
  void (async () => {
    for await (const chunk of serve.proc.stderr as ReadableStream<Uint8Array>)
      stderr += new TextDecoder().decode(chunk)
  })()
})
afterAll(async () => {
  await serve?.kill('SIGTERM')
  await up.stop()
  await hook.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('switchyard reload: both processes take the new model, the stream in flight finishes whole', async () => {
  const { res, open } = await streamInFlight()
  writeConfig(dir, doc(['m0', 'm1']))
  const r = await cli(['reload', '--config', config, '--port', String(serve.port), '--json'])
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  const body = r.json()
  expect(body).toMatchObject({ outcome: 'applied', generation: 2, changed: { sections: ['providers'] } })
  expect(body.others).toEqual([{ pid: expect.any(Number), outcome: 'applied' }])
  expect(await everyProcessServes('up/m1')).toEqual(Array(16).fill(200))
  open()
  expect(await streamText(res)).toEqual({ text: FIRST + SECOND, done: true })
  // The text form says what changed.
  writeConfig(dir, doc(['m0', 'm1', 'm1b']))
  const text = await cli(['reload', '--config', config, '--port', String(serve.port)])
  expect(text.stdout).toContain('providers.up')
  expect(text.stdout).toContain('1 other process')
})

test('SIGHUP to serve: every process reloads, audited; the stream in flight finishes whole', async () => {
  const { res, open } = await streamInFlight()
  writeConfig(dir, doc(['m0', 'm2']))
  serve.proc.kill('SIGHUP')
  // The audit line is written once every process has answered.
  while (!stderr.includes('"action":"SIGHUP"')) await Bun.sleep(20)
  const line = JSON.parse(stderr.split('\n').find((l) => l.includes('"action":"SIGHUP"'))!)
  expect(line).toMatchObject({
    actor: 'signal',
    outcome: 'ok',
    change: { outcome: 'applied', generation: 4 },
  })
  expect(line.change.others).toEqual([{ pid: expect.any(Number), outcome: 'applied' }])
  expect(await everyProcessServes('up/m2')).toEqual(Array(16).fill(200))
  expect((await chat('up/m1')).status).toBe(404)
  open()
  expect(await streamText(res)).toEqual({ text: FIRST + SECOND, done: true })
  expect(serve.proc.exitCode).toBeNull()
})

test('each reload sent one reload.applied webhook, with the other process in it, not one per process', async () => {
  // Three reloads applied above: two by `switchyard reload`, one by SIGHUP. At least once: a
  // delivery may come twice under one id; one per process would be another event, another id.
  const events = () => [...new Map(hook.got.map((d) => [d.id, d])).values()]
  const end = Date.now() + 10_000
  while (events().length < 3 && Date.now() < end) await Bun.sleep(20)
  await Bun.sleep(500) // a second process's copy would have come by now
  expect(events().map((d) => d.event)).toEqual(['reload.applied', 'reload.applied', 'reload.applied'])
  for (const d of events()) {
    expect(verify(SECRET, d.signature, d.body)).toBe(true)
    expect(d.doc.data.changed).toEqual(['providers.up'])
    expect(d.doc.data.others).toEqual([{ pid: expect.any(Number), outcome: 'applied' }])
  }
})
