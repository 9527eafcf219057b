/**
 * Live reload through `POST /admin/v1/reload` (DESIGN §13), on one gateway read from a real file:
 * a stream in flight across the reload finishes whole on the config it started with; a model
 * added to the file answers at once; a plan's limit changed is enforced on the next request; a
 * broken file is refused with every problem (the old config still serving); a start-only setting
 * changed is refused naming it; each reload is audited with what changed; a provider configured
 * as before keeps its open circuit, a changed one starts afresh and sends the `circuit.closed` its
 * `circuit.opened` is owed (audit64 finding 2); a new alias answers at once;
 * every outcome but `unchanged` sends its signed `reload.applied` / `reload.refused` webhook once,
 * naming what changed or why it was refused by the file's paths.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { buildDeps } from '../../../src/app/build.ts'
import { type Running, startServer } from '../../../src/app/serve.ts'
import { loadConfigFile } from '../../../src/config/index.ts'
import { createLogger } from '../../../src/util/log.ts'
import { ADMIN_TOKEN, PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import {
  FIRST,
  type GatedUpstream,
  SECOND,
  startGatedUpstream,
  streamText,
} from '../../support/gated-upstream.ts'
import { writeConfig } from '../../support/process.ts'
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../support/webhook-receiver.ts'

let up: GatedUpstream
let hook: WebhookReceiver
const SECRET = 'whsec-reload-0123456789abcdef'
let running: Running
let dir: string
let file: string
let key: string
const logs: string[] = []
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

const model = (name: string) => ({
  name,
  context_window: 8192,
  max_output_tokens: 512,
  features: ['streaming'],
})
/** The file as the test writes it: `models` of the upstream, the `tight` plan's rpm. */
const doc = (models: string[], rpm: number, extra: Record<string, unknown> = {}, downHeaders = {}) =>
  testConfigDoc({
    providers: [
      { prefix: 'up', kind: 'openai', base_url: `${up.url}/v1`, api_key: 'k', models: models.map(model) },
      // One failure opens its circuit for ten minutes.
      {
        prefix: 'down',
        kind: 'openai',
        base_url: `${up.url}/v1`,
        api_key: 'k',
        headers: downHeaders,
        retry: { attempts: 0 },
        circuit: { failures: 1, cooldown_s: 600 },
        models: [model('fail')],
      },
    ],
    plans: { ...PLANS, tight: { rpm, rpd: null, models: ['*'] } },
    default_plan: 'tight',
    alerts: {
      webhooks: [
        {
          url: hook.url,
          secret: SECRET,
          events: ['reload.applied', 'reload.refused', 'circuit.opened', 'circuit.closed'],
        },
      ],
      poll_ms: 20,
    },
    ...extra,
  })

const chat = (m: string, stream = false) =>
  fetch(`${running.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: m, messages: [{ role: 'user', content: 'hi' }], stream }),
  })
const reload = () => fetch(`${running.url}/admin/v1/reload`, { method: 'POST', headers: admin })

beforeAll(async () => {
  up = await startGatedUpstream()
  hook = startWebhookReceiver()
  dir = tempDir()
  file = writeConfig(dir, doc(['slow'], 100))
  const config = await loadConfigFile(file)
  running = startServer(config, buildDeps(config, { log: createLogger('info', (l) => logs.push(l)) }))
  await running.deps.accounts.createAccount('acct', 'tight')
  key = (await running.deps.accounts.createKey('acct', 'k')).key
})
afterAll(async () => {
  await running.stop()
  await up.stop()
  await hook.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('a stream in flight across a reload finishes whole; a new model answers at once; a limit changed is enforced next', async () => {
  const open = up.hold()
  const res = await chat('up/slow', true)
  expect(res.status).toBe(200)
  while (up.waiting < 1) await Bun.sleep(5)
  expect((await chat('up/fresh')).status).toBe(404)
  // The two requests so far count in the minute: rpm 2 refuses the next one.
  writeConfig(dir, doc(['slow', 'fresh'], 2))
  const r = await reload()
  expect(r.status).toBe(200)
  const body = (await r.json()) as Record<string, any>
  expect(body.outcome).toBe('applied')
  expect(body.generation).toBe(2)
  expect(body.changed.sections.sort()).toEqual(['plans', 'providers'])
  expect(body.changed.entries.plans).toEqual({ added: [], removed: [], changed: ['tight'] })
  expect(body.changed.entries.providers).toEqual({ added: [], removed: [], changed: ['up'] })
  // Still open on the old config: the stream was admitted before the reload.
  expect(up.waiting).toBe(1)
  const fresh = await chat('up/fresh')
  expect(fresh.status).toBe(200)
  expect(((await fresh.json()) as any).choices[0].message.content).toBe(FIRST + SECOND)
  const refused = await chat('up/slow')
  expect(refused.status).toBe(429)
  open()
  expect(await streamText(res)).toEqual({ text: FIRST + SECOND, done: true })
  const audit = logs
    .map((l) => JSON.parse(l))
    .find((l) => l.msg === 'audit' && l.action === 'POST /admin/v1/reload')
  expect(audit).toMatchObject({ actor: 'admin_token', outcome: 'ok', status: 200 })
  expect(audit.change).toMatchObject({ outcome: 'applied', generation: 2, plans: { changed: ['tight'] } })
  expect(logs.some((l) => l.includes('"msg":"config reloaded"'))).toBe(true)
})

test('a broken file is refused with every problem, and the running config keeps serving', async () => {
  const broken = doc(['slow', 'fresh'], 50, { default_plan: 'nowhere', surprise: true })
  writeConfig(dir, broken)
  const r = await reload()
  expect(r.status).toBe(422)
  const err = ((await r.json()) as any).error
  expect(err.code).toBe('config_invalid')
  expect(err.message).toContain('the running config stays')
  expect(err.message).toContain('/surprise')
  expect(err.message).toContain('/default_plan')
  // Generation 2 still: the model it added answers, the rpm 2 it set still refuses.
  expect((await chat('up/fresh')).status).toBe(429)
  writeConfig(dir, doc(['slow', 'fresh'], 100))
  const ok = await reload()
  expect(((await ok.json()) as any).generation).toBe(3)
  expect((await chat('up/fresh')).status).toBe(200)
})

test('a setting read only at start is refused naming it, with the restart it needs', async () => {
  writeConfig(
    dir,
    doc(['slow', 'fresh'], 100, { server: { host: '127.0.0.1', port: 1 }, database: { path: 'other.db' } }),
  )
  const r = await reload()
  expect(r.status).toBe(409)
  const err = ((await r.json()) as any).error
  expect(err.code).toBe('restart_required')
  expect(err.message).toContain('/server/port')
  expect(err.message).toContain('/database/path')
  expect(err.message).toContain('restart')
  writeConfig(dir, doc(['slow', 'fresh'], 100))
  const same = await reload()
  expect(((await same.json()) as any).outcome).toBe('unchanged')
  // Behind the admin guard like every admin route.
  expect((await fetch(`${running.url}/admin/v1/reload`, { method: 'POST' })).status).toBe(401)
})

test("the console's plans page says how to reload", async () => {
  const html = await (await fetch(`${running.url}/console`)).text()
  const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!
  const js = await (await fetch(`${running.url}${script}`)).text()
  expect(js).toContain('switchyard reload')
  expect(js).toContain('POST /admin/v1/reload')
  expect(js).not.toContain('change them there and restart')
})

test('a provider configured as before keeps its open circuit; a changed one starts afresh, its circuit.closed sent', async () => {
  const circuitEvents = () => [
    ...new Map(hook.got.filter((d) => d.event.startsWith('circuit.')).map((d) => [d.id, d])).values(),
  ]
  const until = async (n: number) => {
    for (let i = 0; i < 500 && circuitEvents().length < n; i++) await Bun.sleep(20)
    await Bun.sleep(100) // one too many would be here by now
    return circuitEvents()
  }
  expect((await chat('down/fail')).status).toBeGreaterThanOrEqual(500)
  expect((await chat('down/fail')).status).toBeGreaterThanOrEqual(500)
  expect(up.calls('fail')).toBe(1) // the second never left: the circuit is open
  const target = { provider: 'down', key: '#0', model: 'down/fail' }
  expect((await until(1)).map((d) => [d.event, d.doc.data])).toEqual([
    ['circuit.opened', { ...target, pid: process.pid }],
  ])
  writeConfig(dir, doc(['slow', 'fresh'], 99))
  expect(((await (await reload()).json()) as any).changed.sections).toEqual(['plans'])
  await chat('down/fail')
  expect(up.calls('fail')).toBe(1)
  await Bun.sleep(300) // kept open: nothing to tell (a closed would be here by now)
  expect(circuitEvents()).toHaveLength(1)
  writeConfig(dir, doc(['slow', 'fresh'], 99, {}, { 'x-fixed': '1' }))
  expect(((await (await reload()).json()) as any).changed.entries.providers.changed).toEqual(['down'])
  // Started afresh, closed: the receiver told it opened is told it closed, and why.
  const closed = (await until(2))[1]!
  expect([closed.event, closed.doc.data]).toEqual([
    'circuit.closed',
    { ...target, reason: 'reload', pid: process.pid },
  ])
  expect(verify(SECRET, closed.signature, closed.body)).toBe(true)
  await chat('down/fail')
  expect(up.calls('fail')).toBe(2)
  // Still failing: it opens again, and says so.
  expect((await until(3)).map((d) => d.event)).toEqual(['circuit.opened', 'circuit.closed', 'circuit.opened'])
})

test('a new alias answers at once, under its target', async () => {
  expect((await chat('team/new')).status).toBe(404)
  writeConfig(
    dir,
    doc(['slow', 'fresh'], 99, { aliases: [{ id: 'team/new', to: 'up/fresh' }] }, { 'x-fixed': '1' }),
  )
  const body = (await (await reload()).json()) as any
  expect(body.changed.sections).toEqual(['aliases'])
  expect(body.changed.entries.aliases).toEqual({ added: ['team/new'], removed: [], changed: [] })
  const r = await chat('team/new')
  expect(r.status).toBe(200)
  expect(((await r.json()) as any).model).toBe('up/fresh')
})

test("each reload outcome sends its signed webhook once, by the file's paths; an unchanged file sends none", async () => {
  // The earlier tests' reloads sent theirs: every one delivered before counting.
  const queued = async () =>
    ((await (await fetch(`${running.url}/admin/v1/deliveries?limit=200`, { headers: admin })).json()) as any)
      .data as any[]
  for (let i = 0; i < 500 && (await queued()).some((d) => d.state !== 'delivered'); i++) await Bun.sleep(20)
  // At least once: a delivery may come twice (the sender of the generation a reload replaced is
  // stopped mid-send), under one id.
  const ids = () => new Set(hook.got.map((d) => d.id))
  const before = ids()
  expect(before.size).toBe((await queued()).length)
  const base = doc(
    ['slow', 'fresh'],
    99,
    { aliases: [{ id: 'team/new', to: 'up/fresh' }] },
    { 'x-fixed': '1' },
  )
  writeConfig(dir, { ...base, server: { ...(base.server as object), cors_origins: ['https://a.example'] } })
  expect((await reload()).status).toBe(200)
  writeConfig(dir, { ...base, surprise: true })
  expect((await reload()).status).toBe(422)
  writeConfig(dir, { ...base, server: { host: '127.0.0.1', port: 1 } })
  expect((await reload()).status).toBe(409)
  writeConfig(dir, { ...base, server: { ...(base.server as object), cors_origins: ['https://a.example'] } })
  expect(((await (await reload()).json()) as any).outcome).toBe('unchanged')
  const end = Date.now() + 10_000
  while (ids().size < before.size + 3 && Date.now() < end) await Bun.sleep(20)
  await Bun.sleep(200) // a fourth (the unchanged file's) would be here by now
  const got = [...new Map(hook.got.filter((d) => !before.has(d.id)).map((d) => [d.id, d])).values()]
  expect(got.map((d) => d.event).sort()).toEqual(['reload.applied', 'reload.refused', 'reload.refused'])
  for (const d of got) expect(verify(SECRET, d.signature, d.body)).toBe(true)
  const data = got.map((d) => d.doc.data)
  expect(data.find((x) => x.changed)).toMatchObject({ source: file, changed: ['server.cors_origins'] })
  expect(data.find((x) => x.reason === 'config_invalid')).toMatchObject({ problems: ['/surprise'] })
  expect(data.find((x) => x.reason === 'restart_required')).toMatchObject({ problems: ['/server/port'] })
  expect((await queued()).length).toBe(before.size + 3)
})
