/**
 * Renewals of one account made at the same moment, through the admin API and the real command
 * line, each add their days (see test/accounts/plan-renewal-race.test.ts for the store side).
 * Found by an audit: both renewals extended from the end they had read, so a customer who paid
 * twice got one term.
 *
 * A lock held elsewhere while the renewals start (SQLite's write lock, a PostgreSQL row lock) lets
 * every one of them read the account before any of them can write: the moment a race needs, made
 * certain. The command line takes SQLite's write lock as it opens the database (its migration
 * check), so its processes race on SQLite only by a few milliseconds: they run on PostgreSQL here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { DAY_MS } from '../../../src/util/clock.ts'
import { TEST_POOL_SIZE } from '../../support/backends.ts'
import { cliProcess } from '../../support/cli.ts'
import { skipWithout } from '../../support/engines.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { holdWriteLock } from '../../support/lock.ts'
import { writeConfig } from '../../support/process.ts'
import { type SharedPostgres, sharedPostgres } from '../../support/shared-engines.ts'

let gw: TestGateway

beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }

async function account(name: string): Promise<any> {
  const r = await fetch(`${gw.url}/admin/v1/accounts/${name}`, { headers: admin })
  expect(r.status).toBe(200)
  return r.json()
}

const ends = (a: any) => a.plan_history.map((h: any) => `${h.reason} → ${h.expires_at}`)

describe('renewals at the same moment each add their days', () => {
  test('four admin API renewals of 10 days add 40 days, with four history rows', async () => {
    const created = await fetch(`${gw.url}/admin/v1/accounts`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'api-race', plan: 'pro', days: 30 }),
    })
    const end = Date.parse(((await created.json()) as any).plan_expires_at)
    const lock = await holdWriteLock(join(gw.dir, 'switchyard.db'), 1_000)
    const answers = await Promise.all(
      [1, 2, 3, 4].map(() =>
        fetch(`${gw.url}/admin/v1/accounts/api-race/plan`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({ plan: 'pro', days: 10 }),
        }),
      ),
    )
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200])
    await lock.released
    const a = await account('api-race')
    expect(a.plan_expires_at).toBe(new Date(end + 40 * DAY_MS).toISOString())
    expect(ends(a)).toEqual([
      `created → ${new Date(end).toISOString()}`,
      ...[1, 2, 3, 4].map((n) => `renewed → ${new Date(end + n * 10 * DAY_MS).toISOString()}`),
    ])
  })
})

const noPg = skipWithout(['postgres'], 'admin-plan-renewal-race.test.ts (command line on PostgreSQL)')

describe.skipIf(noPg)('renewals by the command line at the same moment, on PostgreSQL', () => {
  let pg: SharedPostgres
  beforeAll(async () => {
    pg = await sharedPostgres()
  }, 60_000)
  afterAll(() => pg.release())

  test('three `accounts set-plan --days 10` processes at once add 30 days, with three history rows', async () => {
    const url = await pg.clone()
    const config = writeConfig(
      gw.dir,
      testConfigDoc({ logging: { level: 'error' }, database: { url, pool_size: TEST_POOL_SIZE } }),
      'cli-pg.yaml',
    )
    const run = (...args: string[]) => cliProcess([...args, '--config', config, '--json'])
    const created = await run('accounts', 'create', 'cli-race', '--plan', 'pro', '--days', '30')
    expect(created.code).toBe(0)
    const end = Date.parse(JSON.parse(created.stdout).plan_expires_at)

    const sql = new SQL(url, { max: 2 })
    try {
      // Hold the account's row: the processes read it (reads take no row lock), then wait to write.
      let release!: () => void
      const released = new Promise<void>((r) => {
        release = r
      })
      const holding = sql.begin(async (tx) => {
        await tx`SELECT id FROM accounts WHERE name = ${'cli-race'} FOR UPDATE`
        await released
      })
      const runs = Promise.all(
        [1, 2, 3].map(() => run('accounts', 'set-plan', 'cli-race', 'pro', '--days', '10')),
      )
      const deadline = Date.now() + 20_000
      while (Date.now() < deadline) {
        const [row] = await sql`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = ${'Lock'}`
        if (row.n === 3) break
        await Bun.sleep(20)
      }
      release()
      await holding
      expect((await runs).map((r) => r.code)).toEqual([0, 0, 0])

      const show = await run('accounts', 'show', 'cli-race')
      expect(JSON.parse(show.stdout).plan_expires_at).toBe(new Date(end + 30 * DAY_MS).toISOString())
      const history = await sql`
        SELECT h.reason, h.expires_at FROM plan_history h JOIN accounts a ON a.id = h.account_id
        WHERE a.name = ${'cli-race'} ORDER BY h.id`
      expect(history.map((h: any) => `${h.reason} +${(Number(h.expires_at) - end) / DAY_MS}d`)).toEqual([
        'created +0d',
        'renewed +10d',
        'renewed +20d',
        'renewed +30d',
      ])
    } finally {
      await sql.close()
    }
  }, 60_000)
})
