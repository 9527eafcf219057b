/**
 * A plan's term through the admin API and the real command line, side by side on one database.
 * Found by an audit: the command line's `--days 0` (end the plan now) and `--expires-at TIME`
 * had no admin API counterpart (`days: 0` was a 400, `expires_at` an unknown field), though the
 * admin API is to offer the same operations (DESIGN §4). Both now take both, with the same
 * refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cliProcess } from '../../support/cli.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { writeConfig } from '../../support/process.ts'

let gw: TestGateway
let base: string[]

beforeAll(async () => {
  gw = await startGateway()
  const config = writeConfig(gw.dir, testConfigDoc({ logging: { level: 'error' } }), 'cli.yaml')
  base = ['--config', config, '--db', join(gw.dir, 'switchyard.db'), '--json']
})
afterAll(() => gw.stop())

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }

async function api(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(`${gw.url}/admin/v1${path}`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify(body),
  })
  return { status: r.status, json: await r.json() }
}

async function cli(...args: string[]): Promise<{ code: number; json: any }> {
  const r = await cliProcess([...args, ...base])
  return { code: r.code, json: JSON.parse(r.stdout || r.stderr.trim().split('\n').at(-1)!) }
}

/** The parts of an account view that do not depend on which one was made first. */
const term = (a: any) => ({ plan: a.plan, plan_status: a.plan_status, plan_expires_at: a.plan_expires_at })

describe('a plan term: admin API and command line alike', () => {
  test('expires_at / --expires-at set the same end, at creation and on set-plan', async () => {
    const viaApi = await api('/accounts', { name: 'api-1', plan: 'pro', expires_at: '2030-01-31' })
    const viaCli = await cli('accounts', 'create', 'cli-1', '--plan', 'pro', '--expires-at', '2030-01-31')
    expect(viaApi.status).toBe(200)
    expect(viaCli.code).toBe(0)
    expect(term(viaApi.json)).toEqual({
      plan: 'pro',
      plan_status: 'active',
      plan_expires_at: '2030-01-31T00:00:00.000Z',
    })
    expect(term(viaCli.json)).toEqual(term(viaApi.json))

    const at = '2031-06-30T12:00:00Z'
    const apiSet = await api('/accounts/api-1/plan', { plan: 'basic', expires_at: at })
    const cliSet = await cli('accounts', 'set-plan', 'cli-1', 'basic', '--expires-at', at)
    expect(apiSet.status).toBe(200)
    expect(term(apiSet.json)).toEqual({
      plan: 'basic',
      plan_status: 'active',
      plan_expires_at: '2031-06-30T12:00:00.000Z',
    })
    expect(term(cliSet.json)).toEqual(term(apiSet.json))
  }, 30_000)

  test('days 0 / --days 0 end the plan now: downgraded at once, the same way', async () => {
    await api('/accounts', { name: 'api-2', plan: 'pro' })
    await cli('accounts', 'create', 'cli-2', '--plan', 'pro')
    const viaApi = await api('/accounts/api-2/plan', { plan: 'pro', days: 0 })
    const viaCli = await cli('accounts', 'set-plan', 'cli-2', 'pro', '--days', '0')
    expect(viaApi.status).toBe(200)
    expect(term(viaApi.json)).toEqual({ plan: 'free', plan_status: 'active', plan_expires_at: null })
    expect(term(viaCli.json)).toEqual(term(viaApi.json))
  }, 30_000)

  test('the same refusals: a day that does not exist, both at once, an end in the past', async () => {
    await api('/accounts', { name: 'api-3', plan: 'pro' })
    const noDay = await api('/accounts/api-3/plan', { plan: 'pro', expires_at: '2030-02-31' })
    expect(noDay.status).toBe(400)
    expect(noDay.json.error).toMatchObject({ code: 'invalid_value', param: 'expires_at' })
    expect(noDay.json.error.message).toContain('ISO-8601 date or time that exists')
    expect((await cli('accounts', 'set-plan', 'api-3', 'pro', '--expires-at', '2030-02-31')).code).toBe(2)

    const both = await api('/accounts', { name: 'api-4', plan: 'pro', days: 3, expires_at: '2030-01-31' })
    expect(both.status).toBe(400)
    expect(both.json.error).toMatchObject({ code: 'invalid_value', param: 'expires_at' })
    expect(both.json.error.message).toContain('not both')
    const cliBoth = await cli('accounts', 'create', 'cli-4', '--days', '3', '--expires-at', '2030-01-31')
    expect(cliBoth.code).toBe(2)
    expect(cliBoth.json.error.message).toContain('not both')

    const past = await api('/accounts/api-3/plan', { plan: 'pro', expires_at: '2020-01-01' })
    const cliPast = await cli('accounts', 'set-plan', 'api-3', 'pro', '--expires-at', '2020-01-01')
    expect(past.status).toBe(400)
    expect(past.json.error).toMatchObject({ code: 'invalid_value', param: 'expires_at' })
    expect(cliPast.code).toBe(1)
    expect(cliPast.json.error).toEqual(past.json.error)
    for (const name of ['api-4', 'cli-4']) {
      const r = await fetch(`${gw.url}/admin/v1/accounts/${name}`, { headers: admin })
      expect(r.status).toBe(404)
    }
    expect((await api('/accounts', { name: 'api-5', days: -1 })).json.error).toMatchObject({ param: 'days' })
  }, 30_000)
})
