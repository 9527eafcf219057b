/**
 * The authentication cache across processes: a change made by another process — the real CLI,
 * a second `serve` sharing the SQLite file, another replica on PostgreSQL — is applied by a
 * running gateway within AUTH_CHECK_MS (250 ms) of its commit. Each test sends a request every
 * few milliseconds while the change is made, watches the database (from this process) for the
 * moment the change is committed, and asserts: accepted just before, and every request that started more
 * than the bound + SLACK_MS after the commit refused. A change made through the gateway itself
 * applies to its very next request.
 */

import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { AUTH_CHECK_MS } from '../../../src/auth/cache.ts'
import { adminPost } from '../../support/admin-api.ts'
import { TEST_POOL_SIZE } from '../../support/backends.ts'
import { cli } from '../../support/cli.ts'
import { ADMIN_TOKEN, PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { skipWithout } from '../../support/engines.ts'
import { startGateway, type TestGateway } from '../../support/gateway.ts'
import { type ServeProcess, spawnServe, UNSUPERVISED, writeConfig } from '../../support/process.ts'
import { type SharedPostgres, sharedPostgres } from '../../support/shared-engines.ts'

/** The bound the README states; the cache's constant may not exceed it. */
const BOUND_MS = 250
/** For a loaded 2-core machine: how late this process may notice the commit, and scheduling noise. */
const SLACK_MS = 250
/** Requests keep going this long past the deadline, so some are known to start after it. */
const PAST_DEADLINE_MS = 200
/**
 * Between one answer and the next request: a sample every few milliseconds still puts dozens in
 * the PAST_DEADLINE_MS after the deadline (the assertion's "every one refused" over them), where
 * back-to-back requests (~2,000 a second) spent a second of CPU per test and said nothing more.
 */
const SAMPLE_GAP_MS = 5

interface Sample {
  at: number
  status: number
  code: string | null
  models: number
}

async function models(url: string, key: string): Promise<Sample> {
  const at = performance.now()
  const r = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
  const body = (await r.json()) as any
  return { at, status: r.status, code: body?.error?.code ?? null, models: body?.data?.length ?? 0 }
}

/**
 * Runs `change` (in another process) while sending requests to `url`; `committed` reads the
 * database directly. Returns the samples and when the commit was first seen.
 */
async function during(
  url: string,
  key: string,
  change: () => Promise<unknown>,
  committed: () => Promise<boolean> | boolean,
): Promise<{ samples: Sample[]; seenAt: number }> {
  const before = await models(url, key)
  expect(before.status).toBe(200)
  const samples: Sample[] = [before]
  let seenAt = Number.POSITIVE_INFINITY
  let done = false
  const watch = (async () => {
    while (!done && !(await committed())) await Bun.sleep(2)
    seenAt = Math.min(seenAt, performance.now())
  })()
  const changing = change()
  const deadline = () => seenAt + BOUND_MS + SLACK_MS + PAST_DEADLINE_MS
  const started = performance.now()
  while (performance.now() < deadline() && performance.now() - started < 30_000) {
    samples.push(await models(url, key))
    await Bun.sleep(SAMPLE_GAP_MS)
  }
  done = true
  await Promise.all([watch, changing])
  return { samples, seenAt }
}

/** Every request that started past the bound + slack after the commit got `pred`; there were some. */
function assertApplied(r: { samples: Sample[]; seenAt: number }, pred: (s: Sample) => boolean) {
  expect(AUTH_CHECK_MS).toBeLessThanOrEqual(BOUND_MS)
  expect(pred(r.samples[0]!)).toBe(false)
  expect(Number.isFinite(r.seenAt)).toBe(true)
  const late = r.samples.filter((s) => s.at >= r.seenAt + BOUND_MS + SLACK_MS)
  expect(late.length).toBeGreaterThan(0)
  expect(late.filter((s) => !pred(s))).toEqual([])
  // Informational: how long after the commit was seen the first changed answer came.
  const first = r.samples.find((s) => s.at >= r.seenAt && pred(s))
  const lag = first ? Math.max(0, first.at - r.seenAt).toFixed(0) : '?'
  console.log(`  applied ${lag} ms after the commit was seen (bound ${BOUND_MS} ms)`)
}

describe('SQLite: a running gateway applies changes made by other processes within the bound', () => {
  let gw: TestGateway
  let db: Database
  let base: string[] = []
  const doc = testConfigDoc({
    logging: { level: 'error' },
    plans: { ...PLANS, burst: { rpm: 1, rpd: null, models: ['*'] } },
    limits: { suspension: { enabled: true, max_rejections: 2, window_s: 60, duration_s: 600 } },
  })
  beforeAll(async () => {
    const dir = tempDir()
    const dbPath = join(dir, 'shared.db')
    gw = await startGateway({ doc, dbPath })
    base = ['--config', writeConfig(dir, { ...doc, database: { path: dbPath } })]
    db = new Database(dbPath, { readonly: true })
  })
  afterAll(async () => {
    db.close()
    await gw.stop()
  })
  const keyRow = (id: string) =>
    db
      .query<{ state: string; suspended_until: number | null }, [string]>(
        'SELECT state, suspended_until FROM api_keys WHERE id = ?',
      )
      .get(id)!
  const accountRow = (name: string) =>
    db
      .query<{ plan: string; enabled: number }, [string]>('SELECT plan, enabled FROM accounts WHERE name = ?')
      .get(name)!

  /** Through the gateway under test (the change each test makes is another process's; this is not). */
  const newKey = (account: string, plan = 'unlimited') => gw.key(account, plan)

  test('keys disable through the CLI → 403 key_disabled', async () => {
    const { id, key } = await newKey('disable-me')
    const r = await during(
      gw.url,
      key,
      () => cli(['keys', 'disable', id, ...base]),
      () => keyRow(id).state === 'disabled',
    )
    assertApplied(r, (s) => s.status === 403 && s.code === 'key_disabled')
  })

  test('keys revoke through the CLI → 401 invalid_api_key', async () => {
    const { id, key } = await newKey('revoke-me')
    const r = await during(
      gw.url,
      key,
      () => cli(['keys', 'revoke', id, ...base]),
      () => keyRow(id).state === 'revoked',
    )
    assertApplied(r, (s) => s.status === 401 && s.code === 'invalid_api_key')
  })

  test('accounts set-plan through the CLI → the new plan applies (fewer models listed)', async () => {
    const { key } = await newKey('downgrade-me')
    const all = (await models(gw.url, key)).models
    const r = await during(
      gw.url,
      key,
      () => cli(['accounts', 'set-plan', 'downgrade-me', 'free', ...base]),
      () => accountRow('downgrade-me').plan === 'free',
    )
    const fewer = (s: Sample) => s.status === 200 && s.models > 0 && s.models < all
    assertApplied(r, fewer)
  })

  test('accounts disable through the CLI → 403 account_disabled', async () => {
    const { key } = await newKey('close-me')
    const r = await during(
      gw.url,
      key,
      () => cli(['accounts', 'disable', 'close-me', ...base]),
      () => accountRow('close-me').enabled === 0,
    )
    assertApplied(r, (s) => s.status === 403 && s.code === 'account_disabled')
  })

  test('a key suspended by admission in a second `serve` on the same file → 403 key_suspended here', async () => {
    const { id, key } = await newKey('hammer', 'burst')
    const other: ServeProcess = await spawnServe(['--port', '0', ...base], { env: UNSUPERVISED })
    try {
      const hammer = async () => {
        // rpm 1 and more than 2 refusals in the window: the fourth request suspends the key.
        for (let i = 0; i < 10 && keyRow(id).suspended_until === null; i++) {
          const res = await fetch(`${other.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
          })
          await res.arrayBuffer()
        }
      }
      const r = await during(gw.url, key, hammer, () => keyRow(id).suspended_until !== null)
      assertApplied(r, (s) => s.status === 403 && s.code === 'key_suspended')
    } finally {
      await other.kill('SIGKILL')
    }
  }, 30_000)

  test('a change through this gateway (admin API) applies to its very next request', async () => {
    const { id, key } = await newKey('local')
    expect((await models(gw.url, key)).status).toBe(200)
    const r = await fetch(`${gw.url}/admin/v1/keys/${id}/disable`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })
    expect(r.status).toBe(200)
    expect(await models(gw.url, key)).toMatchObject({ status: 403, code: 'key_disabled' })
  })
})

const skipPg = skipWithout(['postgres'], 'auth-cache-processes.test.ts (two gateways on PostgreSQL)')

describe.skipIf(skipPg)(
  'PostgreSQL: two gateway processes, a change through one applies on the other',
  () => {
    let pg: SharedPostgres
    let sql: SQL
    let base: string[] = []
    const replicas: ServeProcess[] = []
    beforeAll(async () => {
      pg = await sharedPostgres()
      const url = await pg.createDatabase()
      const doc = testConfigDoc({ logging: { level: 'error' }, database: { url, pool_size: TEST_POOL_SIZE } })
      base = ['--config', writeConfig(tempDir(), doc)]
      expect((await cli(['migrate', ...base])).code).toBe(0)
      replicas.push(
        ...(await Promise.all([0, 1].map(() => spawnServe(['--port', '0', ...base], { env: UNSUPERVISED })))),
      )
      sql = new SQL(url, { max: 1 })
    }, 60_000)
    afterAll(async () => {
      for (const r of replicas) await r.kill('SIGKILL')
      await sql?.close()
      await pg?.release()
    })
    const keyState = async (id: string) => (await sql`SELECT state FROM api_keys WHERE id = ${id}`)[0].state

    /** Through replica a's admin API: a request, not two CLI processes (the change under test is not this). */
    async function newKey(account: string) {
      await adminPost(replicas[0]!.url, '/accounts', { name: account, plan: 'unlimited' })
      return adminPost(replicas[0]!.url, '/keys', { account })
    }

    test('disabled through the admin API of one replica → refused there at once, on the other within the bound', async () => {
      const { id, key } = await newKey('pg-disable')
      // Both replicas have the key cached.
      for (const r of replicas) expect((await models(r.url, key)).status).toBe(200)
      const [a, b] = replicas as [ServeProcess, ServeProcess]
      const r = await during(
        b.url,
        key,
        async () => {
          const res = await fetch(`${a.url}/admin/v1/keys/${id}/disable`, {
            method: 'POST',
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          })
          expect(res.status).toBe(200)
          expect(await models(a.url, key)).toMatchObject({ status: 403, code: 'key_disabled' })
        },
        async () => (await keyState(id)) === 'disabled',
      )
      assertApplied(r, (s) => s.status === 403 && s.code === 'key_disabled')
    }, 30_000)

    test('revoked through the CLI → 401 on both replicas within the bound', async () => {
      const { id, key } = await newKey('pg-revoke')
      for (const r of replicas) expect((await models(r.url, key)).status).toBe(200)
      const [a, b] = replicas as [ServeProcess, ServeProcess]
      let other: ReturnType<typeof during> | null = null
      const r = await during(
        a.url,
        key,
        async () => {
          // The CLI starts only once replica b has answered its "before" request (during() calls
          // its change after that sample): otherwise a fast revoke can land first under load.
          let bSampled!: () => void
          const bReady = new Promise<void>((resolve) => {
            bSampled = resolve
          })
          other = during(
            b.url,
            key,
            async () => bSampled(),
            async () => (await keyState(id)) === 'revoked',
          )
          await bReady
          return cli(['keys', 'revoke', id, ...base])
        },
        async () => (await keyState(id)) === 'revoked',
      )
      for (const x of [r, await other!])
        assertApplied(x, (s) => s.status === 401 && s.code === 'invalid_api_key')
    }, 30_000)
  },
)
