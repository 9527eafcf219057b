/** Per-key limits through the admin API (DESIGN §11): create with limits, PATCH, 400s naming the field. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      plans: {
        free: { rpm: 5, rpd: 100, models: ['tier:free'] },
        metered: { rpm: 10, rpd: null, tpm: 20_000, budget: { usd: 50, period: 'month' }, models: ['*'] },
      },
    }),
  })
  await gw.deps.accounts.createAccount('acme', 'metered')
})
afterAll(() => gw.stop())

const adminCall = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as any }
}

describe('admin API: a key’s own limits', () => {
  test('create with limits, read them back, change and clear them', async () => {
    const made = await adminCall('POST', '/keys', {
      account: 'acme',
      name: 'ci',
      limits: { tpm: 5000, budget: { usd: 2.5, period: 'day' }, models: ['demo/echo'] },
    })
    expect(made.status).toBe(200)
    expect(made.body.limits).toEqual({
      rpm: null,
      rpd: null,
      tpm: 5000,
      tpd: null,
      budget: { usd: 2.5, period: 'day' },
      models: ['demo/echo'],
    })
    const id = made.body.id
    // /v1/models lists only the key's own models.
    const models = (await (
      await fetch(`${gw.url}/v1/models`, { headers: bearer(made.body.key) })
    ).json()) as any
    expect(models.data.map((m: any) => m.id)).toEqual(['demo/echo'])
    const other = await fetch(`${gw.url}/v1/models/demo/echo-pro`, { headers: bearer(made.body.key) })
    expect(other.status).toBe(404)
    expect((await adminCall('GET', `/keys/${id}`)).body.limits.tpm).toBe(5000)
    expect((await adminCall('GET', '/keys?account=acme')).body.data[0].limits.budget).toEqual({
      usd: 2.5,
      period: 'day',
    })

    const patched = await adminCall('PATCH', `/keys/${id}/limits`, { rpm: 3, tpm: null, budget: { usd: 1 } })
    expect(patched.status).toBe(200)
    expect(patched.body.limits).toEqual({
      rpm: 3,
      rpd: null,
      tpm: null,
      tpd: null,
      budget: { usd: 1, period: 'day' },
      models: ['demo/echo'],
    })
    // Within `budget` too a member left out is kept: the period alone changes the period.
    const weekly = await adminCall('PATCH', `/keys/${id}/limits`, { budget: { period: 'week' } })
    expect(weekly.status).toBe(200)
    expect(weekly.body.limits.budget).toEqual({ usd: 1, period: 'week' })
    const daily = await adminCall('PATCH', `/keys/${id}/limits`, { budget: { period: 'day' } })
    expect(daily.body.limits).toEqual(patched.body.limits)
    // The key holder sees the same under account_information.key.limits.
    const usage = (await (
      await fetch(`${gw.url}/v1/usage`, { headers: bearer(made.body.key) })
    ).json()) as any
    expect(usage.account_information.key.limits).toEqual(patched.body.limits)
    const cleared = await adminCall('PATCH', `/keys/${id}/limits`, { rpm: null, budget: null, models: null })
    expect(Object.values(cleared.body.limits).every((v) => v === null)).toBe(true)
    // An empty change changes nothing.
    // A change that names no limit is a 400 naming the body (admin-cli-key-refusals.test.ts).
    expect((await adminCall('PATCH', `/keys/${id}/limits`, {})).status).toBe(400)
    expect((await adminCall('GET', `/keys/${id}`)).body.limits).toEqual(cleared.body.limits)
  })

  test('bad values and limits outside the plan: 400 naming the field', async () => {
    const { body: k } = await adminCall('POST', '/keys', { account: 'acme' })
    const cases: Array<[unknown, string, RegExp, string]> = [
      [{ tpm: 0 }, 'tpm', /whole number/, 'invalid_value'],
      [{ rpm: 'ten' }, 'rpm', /whole number/, 'invalid_type'],
      [{ tpd: 2.5 }, 'tpd', /whole number/, 'invalid_value'],
      [{ tpm: 20_001 }, 'tpm', /above the account's plan 'metered' \(tpm 20000\)/, 'invalid_value'],
      [{ rpm: 11 }, 'rpm', /above the account's plan/, 'invalid_value'],
      [
        { budget: { usd: 51, period: 'month' } },
        'budget.usd',
        /\$51.00 a month is above .*\$50.00 a month/,
        'invalid_value',
      ],
      [{ budget: { usd: 60, period: 'week' } }, 'budget.usd', /above the account's plan/, 'invalid_value'],
      [{ budget: { usd: 5 } }, 'budget.period', /required/, 'invalid_value'],
      [{ budget: { period: 'day' } }, 'budget.usd', /required: the key has no budget yet/, 'invalid_value'],
      [{ budget: { usd: -1, period: 'day' } }, 'budget.usd', /more than 0/, 'invalid_value'],
      [
        { budget: { usd: 1, period: 'fortnight' } },
        'budget.period',
        /not one of day, week, month/,
        'invalid_value',
      ],
      [{ models: [] }, 'models', /non-empty list/, 'invalid_value'],
      [{ models: ['demo/nope'] }, 'models', /provider 'demo' has no model 'nope'/, 'invalid_value'],
      [{ models: 'demo/echo' }, 'models', /list of model ids/, 'invalid_type'],
      [{ tokens: 5 }, 'tokens', /unknown field/, 'invalid_value'],
      [{ budget: { usd: 1, period: 'day', cap: 2 } }, 'budget.cap', /unknown field/, 'invalid_value'],
      [[5], 'body', /must be an object/, 'invalid_type'],
      // A wrong JSON type is invalid_type, as the routes' schemas answer "days": "30".
      [{ rpm: '5' }, 'rpm', /whole number.*; got a string/, 'invalid_type'],
      [{ budget: 'day' }, 'budget', /must be an object/, 'invalid_type'],
      [{ budget: { usd: '1', period: 'day' } }, 'budget.usd', /more than 0/, 'invalid_type'],
      [{ budget: { usd: 1, period: 7 } }, 'budget.period', /not one of/, 'invalid_type'],
      [{ models: [5] }, 'models', /list of model ids/, 'invalid_type'],
      [{ models: [''] }, 'models', /list of model ids/, 'invalid_value'],
    ]
    for (const [body, param, message, code] of cases) {
      const r = await adminCall('PATCH', `/keys/${k.id}/limits`, body)
      expect({ body, status: r.status, param: r.body.error?.param, code: r.body.error?.code }).toEqual({
        body,
        status: 400,
        param,
        code,
      })
      expect(r.body.error.message).toMatch(message)
    }
    // A day's budget under the plan's monthly one is within it.
    expect(
      (await adminCall('PATCH', `/keys/${k.id}/limits`, { budget: { usd: 10, period: 'day' } })).status,
    ).toBe(200)
    // On create, the fields are under limits.
    const bad = await adminCall('POST', '/keys', { account: 'acme', limits: { tpm: 99_999 } })
    expect(bad.status).toBe(400)
    expect(bad.body.error.param).toBe('limits.tpm')
    const typed = await adminCall('POST', '/keys', { account: 'acme', limits: { rpm: '5' } })
    expect([typed.status, typed.body.error?.code, typed.body.error?.param]).toEqual([
      400,
      'invalid_type',
      'limits.rpm',
    ])
    // A plan model filter: the free plan allows tier:free only.
    await gw.deps.accounts.createAccount('hobby', 'free')
    const pro = await adminCall('POST', '/keys', { account: 'hobby', limits: { models: ['demo/echo-pro'] } })
    expect(pro.status).toBe(400)
    expect(pro.body.error.message).toContain("'demo/echo-pro' is not in the account's plan 'free'")
    expect((await adminCall('PATCH', '/keys/key_nope/limits', { rpm: 1 })).status).toBe(404)
    // Without the admin token: 401, whatever the body.
    const anon = await fetch(`${gw.url}/admin/v1/keys/${k.id}/limits`, { method: 'PATCH', body: '{}' })
    expect(anon.status).toBe(401)
  })
})
