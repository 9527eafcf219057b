/**
 * PostgreSQL + Redis: Redis is never the only record of a charge (DESIGN §5, §7, §11). Redis
 * that lost its data admits nothing against the empty state and is rebuilt from PostgreSQL's
 * rows, once across replicas; an admission script Redis runs after the gateway gave up on it
 * charges nothing; a settlement Redis missed is retried, and what Redis holds for requests the
 * database settled or never admitted is released by the sweep. On the Redis server's clock, as
 * in production, against real engines.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { parseConfig } from '../../src/config/index.ts'
import { type LimitRow, periodBounds } from '../../src/limits/rows.ts'
import type { ChargeRequest } from '../../src/limits/types.ts'
import { openStores, type Store } from '../../src/store/index.ts'
import type { Completion } from '../../src/store/types.ts'
import { UsageRecorder } from '../../src/usage/recorder.ts'
import { retentionPolicy } from '../../src/usage/retention.ts'
import { admission } from '../support/admissions.ts'
import { TEST_POOL_SIZE } from '../support/backends.ts'
import { testConfigDoc } from '../support/config-doc.ts'
import { skipWithout, startRedis, type TestRedis } from '../support/engines.ts'
import { type SharedPostgres, sharedPostgres } from '../support/shared-engines.ts'

const skip = skipWithout(['postgres', 'redis'], 'redis-state.test.ts')
let pg: SharedPostgres
let redis: TestRedis
beforeAll(async () => {
  if (skip) return
  pg = await sharedPostgres()
  redis = await startRedis()
}, 60_000)
afterAll(async () => {
  await redis?.stop()
  await pg?.release()
})

const BUDGET: LimitRow = {
  resource: 'microdollars',
  window: 'period',
  period: 'day',
  scope: 'account',
  capacity: 5_000,
}
const TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 1_000_000 }
/** 100 input + 300 output tokens at $1 / $3 per 1M: 100 + 900 = 1,000 µ$ reserved. */
const CHARGE: ChargeRequest = {
  rows: [TPM, BUDGET],
  inputTokens: 100,
  wantOutput: 300,
  price: { input: 1_000_000, output: 3_000_000 },
}

async function fresh() {
  const url = await pg.clone()
  await redis.flush()
  return url
}

async function open(url: string): Promise<Store> {
  const doc = testConfigDoc({ database: { url }, limits: { redis_url: redis.url, reservation_ttl_s: 1 } })
  const config = parseConfig({ ...doc, database: { url, pool_size: TEST_POOL_SIZE } }, 'test')
  return openStores(config)
}

async function account(store: Store, name = 'acme'): Promise<number> {
  const now = Date.now()
  const a = await store.createAccount({
    name,
    plan: 'free',
    planStartedAt: now,
    planExpiresAt: null,
    now,
  })
  return a.id
}

const charged = (accountId: number) => admission(accountId, Date.now(), { charge: CHARGE })

/** A completion that settles `gatewayId` to 50 + 50 tokens: 50 + 150 = 200 µ$. */
const done = (accountId: number, gatewayId: string, at = Date.now()): Completion => ({
  gatewayId,
  requestId: 'r',
  surface: 'chat',
  stream: false,
  status: 200,
  promptTokens: 50,
  completionTokens: 50,
  latencyMs: 1,
  ttftMs: null,
  errorCode: null,
  counted: { accountId, keyId: 'key_1', model: 'demo/echo', at },
  settlement: { handle: gatewayId, accountId, tokens: 100, micros: 200 },
})

async function used(store: Store, accountId: number) {
  const [tokens, micros] = await store.rowStates({
    accountId,
    keyId: 'key_1',
    now: Date.now(),
    rows: [TPM, BUDGET],
  })
  return { tokens: tokens!.used, micros: micros!.used }
}

async function redisSend(cmd: string, args: string[]) {
  const c = new Bun.RedisClient(redis.url)
  try {
    return await c.send(cmd, args)
  } finally {
    c.close()
  }
}

describe.skipIf(skip)('Redis state against PostgreSQL', () => {
  test('after FLUSHALL an account is rebuilt from PostgreSQL before it admits: the budget is not spent twice', async () => {
    const url = await fresh()
    const store = await open(url)
    const id = await account(store)
    // Two settled (200 µ$ each), two in flight (1,000 µ$ each): 2,400 of 5,000.
    const admitted = []
    for (let i = 0; i < 4; i++) {
      const r = await store.admit(charged(id))
      if (!r.admitted) throw new Error('refused')
      admitted.push(r)
    }
    await store.complete(admitted.slice(0, 2).map((r) => done(id, r.gatewayId, r.at)))
    const before = await used(store, id)
    expect(before).toEqual({ tokens: 2 * 100 + 2 * 400, micros: 2_400 })

    await redisSend('FLUSHALL', [])
    // The next admission rebuilds first: 2,400 + 1,000 = 3,400; then one more fits, then 402.
    const next = await store.admit(charged(id))
    expect(next.admitted).toBe(true)
    expect(await used(store, id)).toEqual({ tokens: before.tokens + 400, micros: 3_400 })
    expect((await store.admit(charged(id))).admitted).toBe(true)
    const refused = await store.admit(charged(id))
    expect(refused.admitted).toBe(false)
    // The rebuilt reservations in flight still settle once, to what they used.
    await store.complete(admitted.slice(2).map((r) => done(id, r.gatewayId, r.at)))
    expect((await used(store, id)).micros).toBe(4_400 - 1_600)
    await store.close()
  }, 30_000)

  test('two replicas that find the state lost at once rebuild it once', async () => {
    const url = await fresh()
    const [a, b] = [await open(url), await open(url)]
    const id = await account(a)
    for (let i = 0; i < 2; i++) expect((await a.admit(charged(id))).admitted).toBe(true)
    await redisSend('FLUSHALL', [])
    const both = await Promise.all([a.admit(charged(id)), b.admit(charged(id)), a.admit(charged(id))])
    expect(both.every((r) => r.admitted)).toBe(true)
    expect((await used(a, id)).micros).toBe(5_000)
    expect((await b.admit(charged(id))).admitted).toBe(false)
    await a.close()
    await b.close()
  }, 30_000)

  // Two behaviours of a Redis that stopped answering, on one stop: each waits out the client's
  // command bound (2 s, COMMAND_TIMEOUT_MS) while Redis is stopped, and the two waits overlap
  // rather than following one another. Each on an account of its own (ids 1 and 2 of one store).
  test('while Redis is stopped: an admission it runs after the gateway gave up on it charges nothing; a settlement it did not take is retried until it does', async () => {
    const url = await fresh()
    const store = await open(url)
    const id = await account(store)
    expect((await store.admit(charged(id))).admitted).toBe(true)
    const other = await account(store, 'globex')
    const r = await store.admit(charged(other))
    if (!r.admitted) throw new Error('refused')
    const errors: Array<Record<string, unknown> | undefined> = []
    const log = { error: (_: string, f?: Record<string, unknown>) => errors.push(f) } as never
    const recorder = new UsageRecorder(store, 60_000, log)
    const pid = redis.pid()!
    process.kill(pid, 'SIGSTOP')
    let resumed = false
    try {
      const [late] = await Promise.all([
        Promise.allSettled(Array.from({ length: 5 }, () => store.admit(charged(id)))),
        (async () => {
          recorder.record(done(other, r.gatewayId, r.at))
          await recorder.flush()
        })(),
      ])
      expect(late.map((r) => r.status)).toEqual(Array(5).fill('rejected'))
      expect(late.map((r) => (r as PromiseRejectedResult).reason?.code)).toEqual(
        Array(5).fill('limiter_unavailable'),
      )
    } finally {
      process.kill(pid, 'SIGCONT')
      resumed = true
    }
    expect(resumed).toBe(true)
    // The settlement Redis did not take is retried until it does.
    expect(errors[0]?.retrying).toBe(true)
    await recorder.flush()
    expect(await used(store, other)).toEqual({ tokens: 100, micros: 200 })
    expect(Number(await redisSend('HLEN', [`sy:{acct:${other}}:res`]))).toBe(0)
    // The queued scripts ran once Redis went on: past their deadline, they refused.
    await Bun.sleep(200)
    expect(Number(await redisSend('HLEN', [`sy:{acct:${id}}:res`]))).toBe(1)
    expect(await used(store, id)).toEqual({ tokens: 400, micros: 1_000 })
    await store.close()
  }, 30_000)

  test('outcomes Redis settled in part are retried whole: what settled the first time is not settled again, nor counted twice in PostgreSQL; the refusal counts of the flush are written at once', async () => {
    const url = await fresh()
    const store = await open(url)
    const id = await account(store)
    const admitted = []
    for (let i = 0; i < 3; i++) {
      const r = await store.admit(charged(id))
      if (!r.admitted) throw new Error('refused')
      admitted.push(r)
    }
    expect(await used(store, id)).toEqual({ tokens: 1_200, micros: 3_000 })
    const errors: Array<Record<string, unknown> | undefined> = []
    const log = { error: (_: string, f?: Record<string, unknown>) => errors.push(f) } as never
    const recorder = new UsageRecorder(store, 60_000, log)
    // Redis refuses the middle one's settlement alone (its script fails on what it holds for it).
    const res = `sy:{acct:${id}}:res`
    const middle = admitted[1]!.gatewayId
    const held = String(await redisSend('HGET', [res, middle]))
    await redisSend('HSET', [res, middle, 'not json'])
    for (const r of admitted) recorder.record(done(id, r.gatewayId, r.at))
    const at = Date.now()
    recorder.recordRefusal({ accountId: id, keyId: 'key_1', code: 'budget_exceeded', status: 402, at })
    await recorder.flush()
    expect(errors.map((e) => e?.retrying)).toEqual([true])
    // The refusal count is PostgreSQL's alone: written with this flush, not held back by Redis.
    const refusals = () =>
      store
        .refusals({ from: at - 3_600_000, to: at + 3_600_000, keyId: 'key_1' })
        .then((l) => l.map((r) => r.count))
    expect(await refusals()).toEqual([1])
    // The other two settled in Redis; the middle one still holds its reservation.
    expect(await used(store, id)).toEqual({ tokens: 100 + 400 + 100, micros: 200 + 1_000 + 200 })
    expect(recorder.settling(id)).toBe(true)
    await redisSend('HSET', [res, middle, held])
    await recorder.flush()
    expect(errors).toHaveLength(1)
    expect(await refusals()).toEqual([1])
    expect(await used(store, id)).toEqual({ tokens: 300, micros: 600 })
    expect(recorder.settling(id)).toBe(false)
    expect(Number(await redisSend('HLEN', [res]))).toBe(0)
    // PostgreSQL took the batch twice and counted it once.
    const now = Date.now()
    const summary = await store.usageSummary(id, now, now - (now % 86_400_000))
    expect(summary.today.total_tokens).toBe(300)
    const sql = new Bun.SQL(url, { max: 1 })
    const rows = await sql`SELECT settled, tokens, charge_micros FROM requests WHERE account_id = ${id}`
    await sql.close()
    expect(
      rows.map((r: Record<string, unknown>) => [r.settled, Number(r.tokens), Number(r.charge_micros)]),
    ).toEqual([
      [true, 100, 200],
      [true, 100, 200],
      [true, 100, 200],
    ])
    await store.close()
  }, 30_000)

  test('the sweep releases what Redis holds for requests PostgreSQL settled or never admitted', async () => {
    const url = await fresh()
    const store = await open(url)
    const id = await account(store)
    const settled = await store.admit(charged(id))
    const orphan = await store.admit(charged(id))
    const live = await store.admit(charged(id))
    if (!settled.admitted || !orphan.admitted || !live.admitted) throw new Error('refused')
    const sql = new Bun.SQL(url, { max: 1 })
    // The process that owed Redis this settlement died after PostgreSQL committed it …
    await sql`UPDATE requests SET settled = TRUE, tokens = 100, charge_micros = 200 WHERE gateway_id = ${settled.gatewayId}`
    // … and this admission's row was never written.
    await sql`DELETE FROM requests WHERE gateway_id = ${orphan.gatewayId}`
    await sql.close()
    expect(await used(store, id)).toEqual({ tokens: 1_200, micros: 3_000 })
    // The unsettled one is the ordinary sweep's (settled to itself: 400 tokens, 1,000 µ$); the
    // settled one is brought to PostgreSQL's amounts, and the orphan released.
    expect(await store.sweepReservations(Date.now() + 1)).toBe(3)
    expect(await used(store, id)).toEqual({ tokens: 500, micros: 1_200 })
    expect(await store.sweepReservations(Date.now() + 1)).toBe(0)
    await store.close()
  }, 30_000)

  test("tokens Redis does not keep (a budget-only plan's) are read from PostgreSQL's rows", async () => {
    const url = await fresh()
    const store = await open(url)
    const id = await account(store)
    const r = await store.admit(admission(id, Date.now(), { charge: { ...CHARGE, rows: [BUDGET] } }))
    if (!r.admitted) throw new Error('refused')
    const unbounded: LimitRow = { ...TPM, capacity: Number.MAX_SAFE_INTEGER }
    const [minute] = await store.rowStates({
      accountId: id,
      keyId: 'key_1',
      now: Date.now(),
      rows: [unbounded],
    })
    expect(minute!.used).toBe(400)
    await store.complete([done(id, r.gatewayId, r.at)])
    const [after] = await store.rowStates({
      accountId: id,
      keyId: 'key_1',
      now: Date.now(),
      rows: [unbounded],
    })
    expect(after!.used).toBe(100)
    await store.close()
  }, 30_000)

  test("retention keeps the charged rows of the budget's period: a rebuild after it still finds the money spent", async () => {
    const url = await fresh()
    // The day window a minute long, so the log's rows beyond `log_max_rows` go after a minute.
    const doc = testConfigDoc({
      database: { url },
      limits: { redis_url: redis.url, day_window_ms: 60_000 },
    })
    const config = parseConfig({ ...doc, database: { url, pool_size: TEST_POOL_SIZE } }, 'test')
    const store = await openStores(config, { callerTime: true })
    const id = await account(store)
    const now = Date.now()
    const month: LimitRow = { ...BUDGET, period: 'month' }
    // Two minutes ago (this month but on its first two minutes): one charged, one not.
    const old = now - 120_000
    const r = await store.admit(admission(id, old, { charge: { ...CHARGE, rows: [month] } }))
    if (!r.admitted) throw new Error('refused')
    await store.complete([done(id, r.gatewayId, r.at ?? old)])
    expect((await store.admit(admission(id, old))).admitted).toBe(true)
    expect((await store.admit(admission(id, now))).admitted).toBe(true)
    const spent = async () =>
      (await store.rowStates({ accountId: id, keyId: 'key_1', now, rows: [month] }))[0]!.used
    expect(await spent()).toBe(200)
    // Every row but the newest may go, yet the charged row of this month stays.
    const policy = { ...retentionPolicy(config, now), logMaxRows: 1 }
    let pruned = 0
    for (let n = await store.pruneHistory(policy); n > 0; n = await store.pruneHistory(policy)) pruned += n
    if (old >= periodBounds('month', now).start) expect(pruned).toBe(1)
    await redisSend('FLUSHALL', [])
    if (old >= periodBounds('month', now).start) expect(await spent()).toBe(200)
    await store.close()
  }, 30_000)
})

describe.skipIf(skip)('a rebuild whose database read fails', () => {
  for (const mode of ['allow', 'reject'] as const) {
    test(`on_unavailable: ${mode} → the database's 503 (store_busy), never served without limits, Redis not called down`, async () => {
      const { openPostgres } = await import('../../src/store/postgres/index.ts')
      const { RedisLimiter } = await import('../../src/store/redis/index.ts')
      const { StoreBusyError } = await import('../../src/store/errors.ts')
      const url = await pg.clone()
      await redis.flush()
      const windows = { minuteMs: 60_000, dayMs: 86_400_000 }
      const parts = await openPostgres({ url, poolSize: TEST_POOL_SIZE, windows, engineTime: true })
      const now = Date.now()
      const a = await parts.accounts.createAccount({
        name: 'acme',
        plan: 'free',
        planStartedAt: now,
        planExpiresAt: null,
        now,
      })
      const warns: string[] = []
      // A statement_timeout on a big account's month of rows, say.
      const log = Object.create(parts.usage)
      log.chargeHistory = async () => {
        throw new StoreBusyError(5_000)
      }
      const limiter = new RedisLimiter({
        url: redis.url,
        windows,
        onUnavailable: mode,
        engineTime: true,
        log,
        accounts: parts.accounts,
        warn: (m: string) => warns.push(m),
      })
      try {
        const outcomes: unknown[] = []
        for (let i = 0; i < 3; i++) {
          outcomes.push(
            await limiter.admit(admission(a.id, Date.now(), { rpm: 2 })).then(
              (r) => r.admitted,
              (e) => (e as Error).constructor.name,
            ),
          )
        }
        expect(outcomes).toEqual(['StoreBusyError', 'StoreBusyError', 'StoreBusyError'])
        expect(warns.filter((w) => w.includes('unreachable'))).toEqual([])
      } finally {
        limiter.close()
        await parts.close()
      }
    }, 30_000)
  }
})
