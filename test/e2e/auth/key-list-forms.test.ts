/**
 * A key's model list takes what a plan's `models` takes (DESIGN §13: "plans and keys allow an
 * alias by its id"): `team/*` for every alias of a prefix, `prefix/*`, `tier:NAME`, `*`, or an id.
 * Found by an audit: the command line and the admin API refused all but exact ids (`error: models:
 * no model 'team/*'`) while the Configuration page said keys name aliases as plans do. Keys made
 * by the real command line are then served by a real gateway on the same database, as they say.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cli } from '../../support/cli.ts'
import {
  ADMIN_TOKEN,
  bearer,
  PLANS,
  startGateway,
  type TestGateway,
  tempDir,
  testConfigDoc,
} from '../../support/gateway.ts'
import { writeConfig } from '../../support/process.ts'

const doc = testConfigDoc({
  aliases: [
    { id: 'team/fast', to: 'demo/echo' },
    { id: 'team/big', to: 'demo/echo-pro' },
  ],
  plans: PLANS,
})
const dir = tempDir()
const db = join(dir, 'cli.db')
const base = ['--config', writeConfig(dir, doc), '--db', db]
/** The key `keys create ACCOUNT --models LIST` printed, by LIST. */
const keys = new Map<string, string>()
let gw: TestGateway

beforeAll(async () => {
  expect((await cli(['accounts', 'create', 'al', '--plan', 'pro', ...base])).code).toBe(0)
  expect((await cli(['accounts', 'create', 'hobby', '--plan', 'free', ...base])).code).toBe(0)
})
afterAll(() => gw?.stop())

const chat = async (key: string, model: string) => {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  })
  const body = (await r.json()) as { error?: { code: string } }
  return `${r.status} ${body.error?.code ?? ''}`.trim()
}
const listed = async (key: string) => {
  const r = await fetch(`${gw.url}/v1/models`, { headers: bearer(key) })
  return ((await r.json()) as { data: { id: string }[] }).data.map((m) => m.id).sort()
}

test('keys create --models takes team/*, prefix/*, tier:NAME and *; a typo or a form outside the plan is refused', async () => {
  for (const list of ['team/*', 'demo/*', 'tier:free', '*', 'team/fast,demo/echo-pro']) {
    const r = await cli(['keys', 'create', 'al', '--models', list, '--json', ...base])
    expect({ list, code: r.code }).toEqual({ list, code: 0 })
    expect(r.json().limits.models).toEqual(list.split(','))
    keys.set(list, r.json().key)
  }
  const refused: Array<[string, string, string]> = [
    ['al', 'tier:nope', "models: no model has tier 'nope' (the tiers: free, pro)"],
    ['al', 'team/slow', "models: no provider has prefix 'team' and no alias has the id 'team/slow'"],
    ['al', 'up/*', "models: no provider has prefix 'up'"],
    // The free plan allows tier:free: the pro tier, and team/big (demo/echo-pro), are outside it.
    ['hobby', 'tier:pro', "models: 'tier:pro' is not in the account's plan 'free'"],
    ['hobby', 'team/big', "models: 'team/big' is not in the account's plan 'free'"],
  ]
  for (const [account, list, message] of refused) {
    const r = await cli(['keys', 'create', account, '--models', list, ...base])
    expect({ list, code: r.code }).toEqual({ list, code: 1 })
    expect(r.stderr).toContain(message)
  }
  // team/* on the free plan reaches team/fast (a free model): within it.
  expect((await cli(['keys', 'create', 'hobby', '--models', 'team/*', ...base])).code).toBe(0)
})

test('the gateway serves each key as its list says, and the admin API takes the same forms', async () => {
  gw = await startGateway({ doc, dbPath: db })
  const team = keys.get('team/*')!
  expect(await chat(team, 'team/fast')).toBe('200')
  expect(await chat(team, 'team/big')).toBe('200')
  expect(await chat(team, 'demo/echo')).toBe('403 model_not_allowed')
  expect(await listed(team)).toEqual(['team/big', 'team/fast'])
  const free = keys.get('tier:free')!
  expect(await chat(free, 'demo/echo')).toBe('200')
  // An alias whose targets are all of the tier is of the tier.
  expect(await chat(free, 'team/fast')).toBe('200')
  expect(await chat(free, 'demo/echo-pro')).toBe('403 model_not_allowed')
  expect(await chat(keys.get('demo/*')!, 'demo/echo-pro')).toBe('200')
  expect(await chat(keys.get('demo/*')!, 'team/fast')).toBe('403 model_not_allowed')
  expect(await chat(keys.get('*')!, 'team/big')).toBe('200')

  const admin = async (method: string, path: string, body: unknown) => {
    const r = await fetch(`${gw.url}/admin/v1${path}`, {
      method,
      headers: { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: r.status, body: (await r.json()) as any }
  }
  const made = await admin('POST', '/keys', { account: 'al', limits: { models: ['team/*'] } })
  expect(made.status).toBe(200)
  expect(await chat(made.body.key, 'team/fast')).toBe('200')
  const patched = await admin('PATCH', `/keys/${made.body.id}/limits`, { models: ['tier:pro'] })
  expect(patched.body.limits.models).toEqual(['tier:pro'])
  expect(await chat(made.body.key, 'team/fast')).toBe('403 model_not_allowed')
  expect(await chat(made.body.key, 'team/big')).toBe('200')
  const typo = await admin('PATCH', `/keys/${made.body.id}/limits`, { models: ['tier:nope'] })
  expect(typo.status).toBe(400)
  expect(typo.body.error).toMatchObject({ param: 'models', code: 'invalid_value' })
  expect(typo.body.error.message).toContain("no model has tier 'nope'")
})
