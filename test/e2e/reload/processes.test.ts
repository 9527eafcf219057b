/**
 * Live reload of a real `serve --workers 2` process tree (supervisor → primary → worker), by
 * `switchyard reload` and by SIGHUP to the process the operator started: each with a stream in
 * flight that finishes whole, and every process serving the new model when the reload is done;
 * each reload's `reload.applied` webhook is sent once, not once per process.
 * The only file here that spawns a server (the suite's slowest kind of test): keep it so.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli } from '../../support/cli.ts'
import { PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { freePort } from '../../support/engines.ts'
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
/** The file's `server.port`: serve is started without `--port`, so a change to it is the file's. */
let port: number
const NEW_TOKEN = 'admin-token-after-the-reload-0123456789'

const model = (name: string) => ({
  name,
  context_window: 8192,
  max_output_tokens: 512,
  features: ['streaming'],
})
const doc = (models: string[], o: { token?: string; port?: number; level?: string } = {}) =>
  testConfigDoc({
    server: { host: '127.0.0.1', port: o.port ?? port, drain_timeout_s: 1 },
    ...(o.token ? { admin: { token: o.token } } : {}),
    ...(o.level ? { logging: { level: o.level } } : {}),
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
  port = await freePort()
  config = writeConfig(dir, doc(['m0']))
  expect((await cli(['accounts', 'create', 'acct', '--config', config])).code).toBe(0)
  key = (await cli(['keys', 'create', 'acct', '--json', '--config', config])).json().key
  serve = await spawnServe(['--workers', '2', '--config', config])
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
  const r = await cli(['reload', '--config', config, '--json'])
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
  const text = await cli(['reload', '--config', config])
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

/** The running gateways' serve files (beside the default database, `data/switchyard.db.<pid>.serving`). */
const serveFiles = () =>
  readdirSync(join(dir, 'data'))
    .filter((n) => /^switchyard\.db\.\d+\.serving$/.test(n))
    .map((n) => join(dir, 'data', n))

test("switchyard reload applies a new admin.token: it proves itself with the running gateway's credential, no failed login", async () => {
  writeConfig(dir, doc(['m0', 'm2'], { token: NEW_TOKEN }))
  const r = await cli(['reload', '--config', config, '--json'])
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  expect(r.json()).toMatchObject({ outcome: 'applied', changed: { sections: ['admin'] } })
  expect(r.json().others).toEqual([{ pid: expect.any(Number), outcome: 'applied' }])
  // Both processes take the new token (16 connections: the kernel spreads them).
  for (let i = 0; i < 16; i++) {
    const res = await fetch(`${serve.url}/admin/v1/deliveries`, {
      headers: { authorization: `Bearer ${NEW_TOKEN}` },
      keepalive: false,
    })
    expect(res.status).toBe(200)
  }
  expect(stderr).not.toContain('invalid_admin_token')
  const line = JSON.parse(stderr.split('\n').find((l) => l.includes('"action":"POST /admin/v1/reload"'))!)
  expect(line).toMatchObject({ actor: 'serve_file', outcome: 'ok' })
})

test('a start-only change (server.port, logging.level) reaches the running gateway, refused: exit 1, restart_required naming each', async () => {
  writeConfig(
    dir,
    doc(['m0', 'm2'], { token: NEW_TOKEN, port: port === 65535 ? port - 1 : port + 1, level: 'debug' }),
  )
  // Six times: the kernel hands each connection to either process, and each must judge the port
  // by the file (a worker listens on the port its primary chose, but its config has the file's).
  for (let i = 0; i < 6; i++) {
    const r = await cli(['reload', '--config', config])
    expect(r.code).toBe(1)
    expect(r.stderr).not.toContain('no gateway answered')
    expect(r.stderr).toContain('/server/port')
    expect(r.stderr).toContain('/logging/level')
  }
  const json = await cli(['reload', '--config', config, '--json'])
  expect(json.code).toBe(1)
  expect(json.stdout + json.stderr).toContain('restart_required')
  // The running gateway kept its port and config.
  expect((await chat('up/m2')).status).toBe(200)
  writeConfig(dir, doc(['m0', 'm2'], { token: NEW_TOKEN }))
})

test('two serve processes on one database: switchyard reload asks each, by its own serve file', async () => {
  const second = await spawnServe(['--config', config, '--port', '0'])
  try {
    expect(serveFiles()).toHaveLength(2)
    writeConfig(dir, doc(['m0', 'm2', 'm3'], { token: NEW_TOKEN }))
    const r = await cli(['reload', '--config', config])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const lines = r.stdout.trim().split('\n')
    expect(lines).toHaveLength(2)
    for (const line of lines) expect(line).toMatch(/^gateway \d+: reloaded .*providers\.up/)
    const res = await fetch(`${second.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up/m3', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(res.status).toBe(200)
    expect((await chat('up/m3')).status).toBe(200)
  } finally {
    await second.kill('SIGTERM')
  }
  // The second's file went with it; the first's stays.
  expect(serveFiles()).toHaveLength(1)
})

test("a serve file a kill -9 left (its pid gone, the live gateway's address) is removed, never asked: no failed admin login", async () => {
  const gone = Bun.spawn(['true'])
  await gone.exited
  const stale = join(dir, 'data', `switchyard.db.${gone.pid}.serving`)
  writeFileSync(stale, JSON.stringify({ pid: gone.pid, url: serve.url, token: 'a-dead-gateways-token' }))
  const r = await cli(['reload', '--config', config])
  expect(r.code).toBe(0)
  expect(r.stderr).toContain(`removed ${stale}`)
  expect(existsSync(stale)).toBe(false)
  expect(serveFiles()).toHaveLength(1)
  expect(stderr).not.toContain('invalid_admin_token')
})

test('the serve file: mode 0600 while serving, its credential in no log line, removed when serve stops', async () => {
  const [file] = serveFiles()
  if (file === undefined) throw new Error('no serve file')
  expect(statSync(file).mode & 0o777).toBe(0o600)
  const written = JSON.parse(readFileSync(file, 'utf8'))
  expect(written.url).toBe(serve.url)
  expect(written.token).toMatch(/^[\w-]{43}$/)
  expect(stderr).not.toContain(written.token)
  await serve.kill('SIGTERM')
  expect(existsSync(file)).toBe(false)
  const gone = await cli(['reload', '--config', config])
  expect(gone.code).toBe(1)
  expect(gone.stderr).toContain('no running gateway found')
})
