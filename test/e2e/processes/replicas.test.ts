/**
 * Three replicas (different ports) on one PostgreSQL, with and without Redis: limits stay exact,
 * a SIGKILLed replica loses no admitted request, a key disabled through the CLI is refused
 * everywhere within a second, and a Redis outage fails closed. One replica is a `serve` process
 * (the kill test kills it), two are gateways in this process with their own store connections,
 * limiter, auth cache and recorder (a replica shares only the store with another): every burst
 * spans two processes, for two `serve` starts (~1.5 s of CPU each on a loaded machine) less.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RedisClient, SQL } from 'bun'
import { PG_LATEST_VERSION } from '../../../src/store/postgres/index.ts'
import { adminPost } from '../../support/admin-api.ts'
import { TEST_POOL_SIZE } from '../../support/backends.ts'
import { BUN, cli } from '../../support/cli.ts'
import { PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { engines, skipWithout, startRedis, type TestRedis } from '../../support/engines.ts'
import { startGateway, type TestGateway } from '../../support/gateway.ts'
import { mainBundle } from '../../support/main-bundle.ts'
import { type ServeProcess, spawnServe, UNSUPERVISED, writeConfig } from '../../support/process.ts'
import { type SharedPostgres, sharedPostgres } from '../../support/shared-engines.ts'

const skipPg = skipWithout(['postgres'], 'replicas.test.ts (three replicas on PostgreSQL)')
const skipRedis = skipPg || skipWithout(['redis'], 'replicas.test.ts (three replicas on PostgreSQL + Redis)')

const VARIANTS = [
  { name: 'PostgreSQL', redis: false, skip: skipPg },
  { name: 'PostgreSQL + Redis', redis: true, skip: skipRedis },
] as const

/** A replica: a `serve` process or a gateway in this process. */
type Replica = { url: string }

/** A variant's database (migrated by `migrate`), the CLI's config arguments, its three replicas (`serve`'s first). */
interface Replicas {
  url: string
  base: string[]
  replicas: Replica[]
  serve: ServeProcess
  local: TestGateway[]
}

// The run's PostgreSQL (empty databases of this file's own, dropped when it ends: the replicas
// migrate them); a Redis of the file's own, since tests kill and restart it.
let pg: SharedPostgres | null = null
let redis: TestRedis | null = null
/** Both variants' replicas, started at once (side by side, not three and three). */
const started = new Map<string, Replicas>()
/** The database `limits.on_unavailable: allow` serves from, migrated beside the replicas' starts. */
let lenientUrl = ''
beforeAll(async () => {
  await Promise.all([
    skipPg || sharedPostgres().then((p) => (pg = p)),
    skipRedis || startRedis().then((r) => (redis = r)),
  ])
  const up = await Promise.allSettled([
    ...VARIANTS.filter((v) => !v.skip).map(async (v) => started.set(v.name, await startReplicas(v.redis))),
    (async () => {
      if (skipRedis) return
      const url = await pg!.createDatabase()
      const config = writeConfig(tempDir(), testConfigDoc())
      expect((await cli(['migrate', '--db', url, '--config', config])).code).toBe(0)
      lenientUrl = url
    })(),
  ])
  for (const r of up) if (r.status === 'rejected') throw r.reason
}, 60_000)
afterAll(async () => {
  // Whatever a failed start left (a variant's describe stops its own after its tests).
  for (const r of started.values()) await stopReplicas(r)
  await redis?.stop()
  await pg?.release()
})

async function startReplicas(withRedis: boolean): Promise<Replicas> {
  const url = await pg!.createDatabase()
  const doc = testConfigDoc({
    logging: { level: 'error' },
    database: { url, pool_size: TEST_POOL_SIZE },
    // 145 refusals would suspend the key (suspension has its own tests, on every backend).
    limits: { suspension: { enabled: false }, ...(withRedis ? { redis_url: redis!.url } : {}) },
    plans: {
      ...PLANS,
      rpm5: { rpm: 5, rpd: null, models: ['*'] },
      rpd5: { rpm: null, rpd: 5, models: ['*'] },
      rpm40: { rpm: 40, rpd: null, models: ['*'] },
    },
  })
  const base = ['--config', writeConfig(tempDir(), doc)]
  const migrated = await cli(['migrate', '--json', ...base])
  expect(migrated.code).toBe(0)
  const every = Array.from({ length: PG_LATEST_VERSION }, (_, i) => i + 1)
  expect(migrated.json()).toMatchObject({ engine: 'postgres', applied: every })
  const backend = { databaseUrl: url, ...(withRedis ? { redisUrl: redis!.url } : {}) }
  const [serve, local] = await Promise.all([
    spawnServe(['--port', '0', ...base], { env: UNSUPERVISED }),
    Promise.all([0, 1].map(() => startGateway({ doc, backend }))),
  ])
  return { url, base, replicas: [serve, ...local], serve, local }
}

async function stopReplicas(r: Replicas): Promise<void> {
  await r.serve.kill('SIGKILL')
  for (const g of r.local.splice(0)) await g.stop()
}

/** Statuses with their counts, so a failure shows what came back instead. */
const tally = (xs: Array<{ status: number }>) =>
  xs.reduce<Record<number, number>>((t, x) => {
    t[x.status] = (t[x.status] ?? 0) + 1
    return t
  }, {})

async function chat(replicas: Replica[], i: number, key: string, rid = `rid-${crypto.randomUUID()}`) {
  const replica = i % replicas.length
  const r = await fetch(`${replicas[replica]!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'x-request-id': rid,
      connection: 'close',
    },
    body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
  })
  return {
    status: r.status,
    replica,
    rid,
    headers: r.headers,
    body: (await r.json().catch(() => null)) as any,
  }
}
type Answer = Awaited<ReturnType<typeof chat>>

const burst = (replicas: Replica[], key: string, n: number) =>
  Promise.all(Array.from({ length: n }, (_, i) => chat(replicas, i, key)))

for (const variant of VARIANTS) {
  describe.skipIf(variant.skip)(`three replicas on ${variant.name}`, () => {
    let url = ''
    let base: string[] = []
    const replicas: Replica[] = []
    let mine: Replicas | undefined

    beforeAll(() => {
      mine = started.get(variant.name)!
      ;({ url, base } = mine)
      replicas.push(...mine.replicas)
    })
    afterAll(async () => {
      started.delete(variant.name)
      if (mine) await stopReplicas(mine)
    })

    /** Through the admin API of the last replica (the kill test kills the first): a request, not two CLI processes. */
    async function keyFor(account: string, plan: string): Promise<{ id: string; key: string }> {
      await adminPost(replicas[2]!.url, '/accounts', { name: account, plan })
      return adminPost(replicas[2]!.url, '/keys', { account })
    }

    test('150 concurrent requests spread over three replicas on rpm 5 → exactly 5 admitted; 429s carry correct headers from every replica', async () => {
      const { key } = await keyFor('minute', 'rpm5')
      const res = await burst(replicas, key, 150)
      expect(tally(res)).toEqual({ 200: 5, 429: 145 })
      for (const replica of [0, 1, 2]) {
        const limited = res.find((r) => r.status === 429 && r.replica === replica)!
        expect(limited.body.error).toMatchObject({ code: 'rate_limit_exceeded' })
        expect(limited.body.error.message).toContain('requests per minute (rpm): limit 5')
        expect(limited.headers.get('x-ratelimit-limit-requests')).toBe('5')
        expect(limited.headers.get('x-ratelimit-remaining-requests')).toBe('0')
        const ms = Number(limited.headers.get('retry-after-ms'))
        expect(ms).toBeGreaterThan(0)
        expect(ms).toBeLessThanOrEqual(60_000)
        expect(Number(limited.headers.get('retry-after'))).toBe(Math.ceil(ms / 1000))
        expect(limited.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+(\.\d+)?s|\d+ms|1m0s)$/)
      }
      const remaining = res
        .filter((r) => r.status === 200)
        .map((r) => r.headers.get('x-ratelimit-remaining-requests'))
        .sort()
      expect(remaining).toEqual(['0', '1', '2', '3', '4'])
    })

    test('the same on rpd 5 → exactly 5 admitted, 429s name the day limit', async () => {
      const { key } = await keyFor('daily', 'rpd5')
      const res = await burst(replicas, key, 150)
      expect(tally(res)).toEqual({ 200: 5, 429: 145 })
      const limited = res.filter((r) => r.status === 429)
      expect(new Set(limited.map((r) => r.replica)).size).toBe(3)
      for (const r of limited.slice(0, 3)) {
        expect(r.body.error.message).toContain('requests per day (rpd): limit 5')
        expect(r.headers.get('x-ratelimit-limit-requests-day')).toBe('5')
        expect(r.headers.get('x-ratelimit-remaining-requests-day')).toBe('0')
        expect(r.headers.get('x-ratelimit-limit-requests')).toBeNull()
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(86_000)
      }
    })

    test('keys disable through the CLI on PostgreSQL → every replica refuses the key within 1 s', async () => {
      const { id, key } = await keyFor('disabled', 'rpm40')
      for (const i of [0, 1, 2]) expect((await chat(replicas, i, key)).status).toBe(200)
      const disabled = await cli(['keys', 'disable', id, '--json', ...base])
      expect(disabled.code).toBe(0)
      const t0 = performance.now()
      const refusedAfter = await Promise.all(
        [0, 1, 2].map(async (i) => {
          for (;;) {
            const r = await chat(replicas, i, key)
            if (r.status === 403) {
              expect(r.body.error.code).toBe('key_disabled')
              return performance.now() - t0
            }
            if (performance.now() - t0 > 5_000) return Number.POSITIVE_INFINITY
          }
        }),
      )
      for (const ms of refusedAfter) expect(ms).toBeLessThan(1_000)
    })

    test('outcomes are recorded; the raw key appears in no table (and in no Redis key or value, each of which expires), before or after rotation', async () => {
      const created = await keyFor('secret', 'rpm40')
      const rotated = (await cli(['keys', 'rotate', created.id, '--json', ...base])).json()
      expect(rotated.key).toMatch(/^sk-sy-/)
      const served = await chat(replicas, 1, rotated.key)
      expect(served.status).toBe(200)
      // The outcome (status, tokens) reaches the usage row within the recorder's flush interval.
      const sql = new SQL(url, { max: 1 })
      let row: { status: number | null; completion_tokens: number | null } | undefined
      for (let i = 0; i < 50 && !row?.status; i++) {
        await Bun.sleep(100)
        ;[row] = await sql`SELECT status, completion_tokens FROM requests WHERE request_id = ${served.rid}`
      }
      await sql.close()
      expect(row?.status).toBe(200)
      expect(row?.completion_tokens).toBeGreaterThan(0)
      const dump = Bun.spawnSync([`${(engines.postgres as { bin: string }).bin}/pg_dump`, '--data-only', url])
      expect(dump.exitCode).toBe(0)
      let text = dump.stdout.toString()
      expect(text).toContain(created.id)
      if (variant.redis) {
        const c = new RedisClient(redis!.url)
        const keys = (await c.send('KEYS', ['*'])) as string[]
        expect(keys.some((k) => k.startsWith('sy:{acct:'))).toBe(true)
        for (const k of keys) {
          // Bounded memory: every key the limiter writes expires.
          expect(await c.send('PTTL', [k])).toBeGreaterThan(0)
          const type = await c.send('TYPE', [k])
          const value =
            type === 'zset'
              ? await c.send('ZRANGE', [k, '0', '-1', 'WITHSCORES'])
              : type === 'hash'
                ? await c.send('HGETALL', [k])
                : await c.send('GET', [k])
          text += `${k} ${JSON.stringify(value)}\n`
        }
        c.close()
      }
      for (const secret of [created.key, rotated.key]) {
        expect(text.includes(secret)).toBe(false)
        expect(text.includes(secret.slice('sk-sy-'.length))).toBe(false)
      }
    })

    if (variant.redis) {
      test('Redis killed mid-test → 503 limiter_unavailable with retry-after on every replica; served again once it is back', async () => {
        const { key } = await keyFor('outage', 'rpm40')
        expect((await chat(replicas, 0, key)).status).toBe(200)
        await redis!.kill()
        try {
          for (const i of [0, 1, 2]) {
            const r = await chat(replicas, i, key)
            expect(r.status).toBe(503)
            expect(r.body.error).toMatchObject({ code: 'limiter_unavailable', type: 'api_error' })
            expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
          }
        } finally {
          await redis!.restart()
        }
        for (const i of [0, 1, 2]) expect((await chat(replicas, i, key)).status).toBe(200)
      })
    }

    // Last: it kills a replica.
    test('SIGKILL one replica mid-burst → every 200 it gave is recorded; used + admitted afterwards == rpm', async () => {
      const warm = await keyFor('warm', 'rpm40')
      for (const i of [0, 1, 2]) await chat(replicas, i, warm.key)
      const { key } = await keyFor('killed', 'rpm40')
      const answers: Answer[] = []
      const victim = mine!.serve
      const inflight = Array.from({ length: 120 }, (_, i) =>
        Bun.sleep(i * 4)
          .then(() => chat(replicas, i, key))
          .then((a) => answers.push(a))
          .catch(() => {}),
      )
      // Kill it once it has answered a few 200s, while requests are still arriving at it.
      for (let i = 0; i < 500 && answers.filter((a) => a.status === 200 && a.replica === 0).length < 3; i++)
        await Bun.sleep(2)
      // The serving process (run without its supervisor: UNSUPERVISED).
      await victim.kill('SIGKILL')
      await Promise.all(inflight)
      const ok = answers.filter((a) => a.status === 200)
      const fromVictim = ok.filter((a) => a.replica === 0)
      expect(fromVictim.length).toBeGreaterThan(0)
      // Every 200 any replica gave, the victim's included, has its usage row.
      const sql = new SQL(url, { max: 1 })
      try {
        const rows =
          await sql`SELECT request_id FROM requests WHERE request_id IN ${sql(ok.map((a) => a.rid))}`
        expect(rows.map((r: { request_id: string }) => r.request_id).sort()).toEqual(
          ok.map((a) => a.rid).sort(),
        )
      } finally {
        await sql.close()
      }
      const live = replicas.slice(1)
      const usage = (await (
        await fetch(`${live[0]!.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as any
      const used = usage.rate_limits.minute.used
      expect(used).toBeGreaterThanOrEqual(ok.length)
      const after = await burst(live, key, 60)
      expect(used + (tally(after)[200] ?? 0)).toBe(40)
    })
  })
}

describe.skipIf(skipPg)('schema versions on PostgreSQL', () => {
  async function serveExit(config: string): Promise<{ code: number; stderr: string }> {
    const proc = Bun.spawn([BUN, await mainBundle(), 'serve', '--port', '0', '--config', config], {
      stdout: 'ignore',
      stderr: 'pipe',
      env: { ...process.env, ...UNSUPERVISED },
    })
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000)
    const code = await proc.exited
    clearTimeout(timer)
    return { code, stderr: await new Response(proc.stderr).text() }
  }

  test('serve refuses a database without the schema, and one newer than it knows; migrate fixes the first', async () => {
    const url = await pg!.createDatabase()
    const config = writeConfig(tempDir(), testConfigDoc({ database: { url, pool_size: TEST_POOL_SIZE } }))
    const empty = await serveExit(config)
    expect(empty.code).not.toBe(0)
    expect(empty.stderr).toContain('run `switchyard migrate`')
    expect((await cli(['accounts', 'list', '--config', config])).stderr).toContain('switchyard migrate')
    expect((await cli(['migrate', '--config', config])).code).toBe(0)
    expect((await cli(['migrate', '--json', '--config', config])).json()).toMatchObject({ applied: [] })
    expect((await cli(['accounts', 'list', '--config', config])).code).toBe(0)
    const sql = new SQL(url, { max: 1 })
    await sql`INSERT INTO schema_migrations (version, applied_at) VALUES (${99}, ${Date.now()})`
    await sql.close()
    const newer = await serveExit(config)
    expect(newer.code).not.toBe(0)
    expect(newer.stderr).toContain('newer than this build supports')
  }, 60_000)
})

describe.skipIf(skipRedis)('limits.on_unavailable: allow', () => {
  test('Redis down → served without limits and still recorded, with a warning; once back, what it served counts', async () => {
    const url = lenientUrl
    const gw = await startGateway({
      doc: testConfigDoc({ limits: { on_unavailable: 'allow' } }),
      backend: { databaseUrl: url, redisUrl: redis!.url },
    })
    try {
      const { key } = await gw.key('lenient', 'free')
      const send = () =>
        fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
        }).then((r) => r.status)
      await redis!.kill()
      try {
        // rpm 5, yet all 7 are served while the limiter is unreachable.
        for (let i = 0; i < 7; i++) expect(await send()).toBe(200)
      } finally {
        await redis!.restart()
      }
      expect(gw.logs.some((l) => l.includes('redis limiter unreachable; serving without limits'))).toBe(true)
      // The restarted Redis is rebuilt from PostgreSQL's rows: the 7 served this minute count, so
      // rpm 5 refuses until they leave the window.
      const after = await Promise.all(Array.from({ length: 8 }, send))
      expect(after.filter((s) => s === 200)).toHaveLength(0)
      expect(after.filter((s) => s === 429)).toHaveLength(8)
      const sql = new SQL(url, { max: 1 })
      const [n] = await sql`SELECT COUNT(*)::int AS n FROM requests`
      await sql.close()
      expect(n.n).toBe(7)
    } finally {
      await gw.stop()
    }
  }, 60_000)
})
