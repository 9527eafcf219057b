import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { SEED_MODELS, seedRequestLog } from '../../scripts/bench/request-log-seed.ts'
import { parseConfig } from '../../src/config/index.ts'
import {
  type Completion,
  openSqliteStore,
  openStores,
  type RequestLogFilter,
  type RequestLogRow,
} from '../../src/store/index.ts'
import { SCAN_BUDGET } from '../../src/store/sqlite/request-log.ts'
import { newRequestId } from '../../src/util/ids.ts'
import { backendDoc, backends } from '../support/backends.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'

const END = Date.parse('2026-03-01T00:00:00Z')

/**
 * The retention policy the counters' prune tests move forward and back (a fresh object each: they
 * change its cutoff): the log kept 8 days, 100 rows at most, 100 rows a chunk.
 */
const countersPolicy = () => ({
  logBefore: END - 8 * 86_400_000,
  logMaxRows: 100,
  logKeepAfter: END - 86_400_000,
  hourlyBefore: 0,
  dailyBefore: 0,
  chunk: 100,
})
const SPAN = 7 * 86_400_000
const N = 30_000

interface Raw {
  id: number
  account_id: number
  key_id: string
  model: string
  surface: string
  status: number | null
  created_at: number
}

function open() {
  const store = openSqliteStore({ path: join(tempDir(), 'db.sqlite'), now: END })
  return store
}

/** Every page of a filter, following cursors to the end. */
async function allPages(store: ReturnType<typeof open>, f: Omit<RequestLogFilter, 'cursor'>) {
  const out: RequestLogRow[] = []
  let cursor: RequestLogFilter['cursor']
  let pages = 0
  for (;;) {
    const page = await store.requestLog({ ...f, cursor })
    expect(page.rows.length).toBeLessThanOrEqual(f.limit)
    out.push(...page.rows)
    pages++
    if (!page.next) return { rows: out, pages }
    cursor = page.next
  }
}

describe('request log', () => {
  const store = open()
  seedRequestLog(store.db, N, END, SPAN, 20)
  const raw = store.db
    .query<Raw, []>('SELECT id, account_id, key_id, model, surface, status, created_at FROM requests')
    .all()
    .sort((a, b) => b.created_at - a.created_at || b.id - a.id)
  const rareModel = SEED_MODELS[SEED_MODELS.length - 1]!
  const busiest = raw[0]!.account_id
  const filters: Array<[string, Omit<RequestLogFilter, 'cursor' | 'limit'>, (r: Raw) => boolean]> = [
    ['no filter', {}, () => true],
    ['account', { accountId: busiest }, (r) => r.account_id === busiest],
    ['key', { keyId: `key_${busiest}_1` }, (r) => r.key_id === `key_${busiest}_1`],
    ['model', { model: rareModel }, (r) => r.model === rareModel],
    ['surface', { surface: 'responses' }, (r) => r.surface === 'responses'],
    ['status', { status: 502 }, (r) => r.status === 502],
    ['status class', { statusMin: 500, statusMax: 599 }, (r) => r.status !== null && r.status >= 500],
    [
      'time range',
      { from: END - SPAN / 2, to: END - SPAN / 4 },
      (r) => r.created_at >= END - SPAN / 2 && r.created_at < END - SPAN / 4,
    ],
    [
      'rare combination (account, model, status, surface, time)',
      { accountId: busiest, model: rareModel, status: 500, surface: 'chat', from: END - SPAN / 2 },
      (r) =>
        r.account_id === busiest &&
        r.model === rareModel &&
        r.status === 500 &&
        r.surface === 'chat' &&
        r.created_at >= END - SPAN / 2,
    ],
  ]

  for (const [name, f, keep] of filters) {
    test(`${name}: the pages together are exactly the matching rows, newest first, no repeats`, async () => {
      const expected = raw.filter(keep).map((r) => r.id)
      expect(expected.length).toBeGreaterThan(0)
      const { rows } = await allPages(store, { ...f, limit: 200 })
      expect(rows.map((r) => r.id)).toEqual(expected)
    })
  }

  test('a rare filter gets partial pages bounded by the scan budget, never a full-log scan', async () => {
    const f = { model: rareModel, status: 500, surface: 'chat', limit: 50 }
    const matches = raw.filter(
      (r) => r.model === rareModel && r.status === 500 && r.surface === 'chat',
    ).length
    const scanned = raw.filter((r) => r.model === rareModel).length
    const { pages } = await allPages(store, f)
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(scanned / SCAN_BUDGET))
    expect(matches).toBeLessThan(scanned / 10)
  })

  test('a row carries its account name and every outcome field; unknown ids are null', async () => {
    const first = (await store.requestLog({ limit: 1 })).rows[0]!
    expect(first.accountName).toMatch(/^seed-/)
    const again = await store.requestById(first.id)
    expect(again).toEqual(first)
    expect(await store.requestById(987654321)).toBeNull()
  })
})

// The rollups on both stores (PostgreSQL's one upsert per bucket, postgres/rollups.ts, serves
// outcomes and rate-limit refusals alike); admissions in Redis change nothing here.
const rollupBackends = backends('history.test.ts').filter((b) => b.name !== 'postgres+redis')

describe.each(rollupBackends)('usage rollups on $name', (b) => {
  test.skipIf(b.skip)('completions and rate-limited requests land in hourly and daily buckets', async () => {
    const urls = await b.fresh()
    const path = join(tempDir(), 'db.sqlite')
    const store = await openStores(
      parseConfig(backendDoc(testConfigDoc({ database: { path } }), urls), 'test'),
      {
        callerTime: true,
      },
    )
    const a = await store.createAccount({
      name: 'a',
      plan: 'free',
      planStartedAt: END,
      planExpiresAt: null,
      now: END,
    })
    const base = {
      accountId: a.id,
      keyId: 'k1',
      requestId: 'r',
      stream: false,
      rpm: null,
      rpd: null,
      suspension: null,
    }
    const ids: string[] = []
    const where: Completion['counted'][] = []
    for (const [i, at] of [END + 1000, END + 2000, END + 3_600_000 + 5].entries()) {
      const model = i === 2 ? 'demo/b' : 'demo/a'
      const r = await store.admit({ ...base, gatewayId: newRequestId(), model, now: at })
      if (!r.admitted) throw new Error('not admitted')
      ids.push(r.gatewayId)
      where.push({ accountId: a.id, keyId: base.keyId, model, at: r.loggedAt! })
    }
    const logged = (i: number) => ({ requestId: 'r', surface: 'chat', stream: false, counted: where[i]! })
    await store.complete([
      {
        ...logged(0),
        gatewayId: ids[0]!,
        status: 200,
        promptTokens: 10,
        completionTokens: 5,
        // Of the 10: read from the provider's prompt cache, and written to it (per key in the rollups).
        cachedTokens: 4,
        cacheWriteTokens: 2,
        latencyMs: 30,
        ttftMs: null,
        errorCode: null,
      },
      {
        ...logged(1),
        gatewayId: ids[1]!,
        status: 502,
        promptTokens: null,
        completionTokens: null,
        latencyMs: 70,
        ttftMs: null,
        errorCode: 'upstream_error',
      },
      {
        ...logged(2),
        gatewayId: ids[2]!,
        status: 200,
        promptTokens: 1,
        completionTokens: 2,
        latencyMs: 10,
        ttftMs: 4,
        errorCode: null,
      },
    ])
    await store.recordRateLimited([
      { accountId: a.id, keyId: 'k1', model: 'demo/a', surface: 'chat', at: END + 4000 },
    ])
    const hourly = await store.usageSeries({
      bucket: 'hour',
      from: END,
      to: END + 3 * 3_600_000,
      groupBy: 'model',
      accountId: a.id,
    })
    const byGroup = Object.fromEntries(hourly.map((s) => [s.group, s.points]))
    expect(byGroup['demo/a']!.map((p) => p.requests)).toEqual([2, 0, 0])
    expect(byGroup['demo/a']![0]).toMatchObject({
      prompt_tokens: 10,
      completion_tokens: 5,
      errors: 1,
      rate_limited: 1,
      latency_ms_sum: 100,
    })
    expect(byGroup['demo/b']!.map((p) => p.requests)).toEqual([0, 1, 0])
    const daily = await store.usageSeries({
      bucket: 'day',
      from: END,
      to: END + 86_400_000,
      groupBy: 'none',
      keyId: 'k1',
    })
    expect(daily).toEqual([
      {
        group: 'all',
        points: [
          {
            t: END,
            requests: 3,
            prompt_tokens: 11,
            completion_tokens: 7,
            errors: 1,
            rate_limited: 1,
            latency_ms_sum: 110,
            cost_micros: 0,
            cached_tokens: 4,
            cache_write_tokens: 2,
          },
        ],
      },
    ])
    const other = await store.usageSeries({
      bucket: 'day',
      from: END,
      to: END + 86_400_000,
      groupBy: 'none',
      accountId: a.id + 1,
    })
    expect(other).toEqual([])
    await store.close()
  })
})

// The twin of the SQLite tests below ("pruned once a cutoff", "a counters delete that throws").
describe.each(rollupBackends.filter((b) => b.name === 'postgres'))('per-minute counters on $name', (b) => {
  test.skipIf(b.skip)('pruned once a cutoff; a delete that throws is tried again next chunk', async () => {
    const urls = await b.fresh()
    const path = join(tempDir(), 'db.sqlite')
    const doc = backendDoc(testConfigDoc({ database: { path } }), urls)
    const store = await openStores(parseConfig(doc, 'test'), { callerTime: true })
    const sql = new SQL(urls.databaseUrl!, { max: 1 })
    const old = Math.floor((END - 9 * 86_400_000) / 60_000)
    const add = (table: string) =>
      sql.unsafe(`INSERT INTO ${table} (account_id, minute, model) VALUES (1, $1, 'm')`, [old])
    const left = async (table: string) =>
      Number((await sql.unsafe(`SELECT COUNT(*) AS n FROM ${table} WHERE minute = $1`, [old]))[0].n)
    const policy = countersPolicy()
    await add('usage_minutes')
    await store.pruneHistory(policy)
    expect(await left('usage_minutes')).toBe(0)
    // Written back (as no counter is): the rest of this run, same cutoff, does not scan for it again.
    await add('usage_minutes')
    await add('usage_minute_outcomes')
    await store.pruneHistory(policy)
    expect(await left('usage_minutes')).toBe(1)
    // The next run's cutoff is later, and its second delete fails once (a real error from PostgreSQL).
    policy.logBefore += 3_600_000
    await sql`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'full'; END $$`
    await sql`CREATE TRIGGER refuse BEFORE DELETE ON usage_minute_outcomes EXECUTE FUNCTION refuse()`
    await expect(store.pruneHistory(policy)).rejects.toThrow()
    expect(await left('usage_minute_outcomes')).toBe(1)
    await sql`DROP TRIGGER refuse ON usage_minute_outcomes`
    // Same cutoff, next chunk: both are still pruned.
    await store.pruneHistory(policy)
    expect(await left('usage_minutes')).toBe(0)
    expect(await left('usage_minute_outcomes')).toBe(0)
    // A clock that jumped a day ahead and was set back: the next cutoff, earlier than that day's, still prunes.
    policy.logBefore += 86_400_000
    await store.pruneHistory(policy)
    policy.logBefore -= 86_400_000 - 3_600_000
    await add('usage_minutes')
    await store.pruneHistory(policy)
    expect(await left('usage_minutes')).toBe(0)
    await sql.close()
    await store.close()
  })
})

describe('usage rollups and retention', () => {
  test('retention prunes by age and by row bound, keeps the last day, and rollups outlive the log', async () => {
    const store = open()
    seedRequestLog(store.db, 12_000, END, 10 * 86_400_000, 5)
    store.db.run(`INSERT INTO usage_hourly (t, account_id, key_id, model, surface, requests) SELECT
      created_at - created_at % 3600000, account_id, key_id, model, surface, COUNT(*) FROM requests GROUP BY 1, 2, 3, 4, 5`)
    const count = () => store.db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM requests').get()!.n
    const policy = {
      logBefore: END - 8 * 86_400_000,
      logMaxRows: 3000,
      logKeepAfter: END - 86_400_000,
      hourlyBefore: END - 9 * 86_400_000,
      dailyBefore: 0,
      chunk: 1000,
    }
    while ((await store.pruneHistory(policy)) > 0) {}
    const left = store.db
      .query<{ n: number; oldest: number }, []>(
        'SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM requests',
      )
      .get()!
    expect(left.n).toBe(3000)
    expect(left.oldest).toBeGreaterThanOrEqual(END - 3 * 86_400_000)
    // The row bound never reaches into the limiter's last day.
    policy.logMaxRows = 1000
    while ((await store.pruneHistory(policy)) > 0) {}
    expect(count()).toBe(1200)
    const hours = store.db.query<{ oldest: number }, []>('SELECT MIN(t) AS oldest FROM usage_hourly').get()!
    expect(hours.oldest).toBeGreaterThanOrEqual(END - 9 * 86_400_000 - 3_600_000)
    expect(hours.oldest).toBeLessThan(END - 8 * 86_400_000)
  })

  test('the per-minute counters are pruned once a cutoff, not at every chunk of the log (their delete scans the tables)', async () => {
    const store = open()
    seedRequestLog(store.db, 1200, END, 10 * 86_400_000, 5)
    const old = Math.floor((END - 9 * 86_400_000) / 60_000)
    const addOld = () =>
      store.db.run('INSERT INTO usage_minutes (account_id, minute, model, requests) VALUES (1, ?, ?, 1)', [
        old,
        'm',
      ])
    const counters = () =>
      store.db
        .query<{ n: number }, [number]>('SELECT COUNT(*) AS n FROM usage_minutes WHERE minute = ?')
        .get(old)!.n
    const policy = countersPolicy()
    addOld()
    // The log's rows past 8 days (~240) go 100 a chunk; the chunk that finds fewer prunes the counters.
    while (counters() > 0) expect(await store.pruneHistory(policy)).toBeGreaterThan(0)
    // Written back (as no counter is): the rest of this run, same cutoff, does not scan for it again.
    addOld()
    while ((await store.pruneHistory(policy)) > 0) {}
    expect(counters()).toBe(1)
    // The next run's cutoff is later: pruned then.
    policy.logBefore += 3_600_000
    while ((await store.pruneHistory(policy)) > 0) {}
    expect(counters()).toBe(0)
    await store.close()
  })

  test('a counters delete that throws (SQLITE_BUSY, SQLITE_FULL) leaves the next chunk pruning them', async () => {
    const store = open()
    const old = Math.floor((END - 9 * 86_400_000) / 60_000)
    store.db.run('INSERT INTO usage_minutes (account_id, minute, model, requests) VALUES (1, ?, ?, 1)', [
      old,
      'm',
    ])
    store.db.run(
      'INSERT INTO usage_minute_costs (account_id, minute, model, cost_micros) VALUES (1, ?, ?, 1)',
      [old, 'm'],
    )
    const left = (table: string) =>
      store.db
        .query<{ n: number }, [number]>(`SELECT COUNT(*) AS n FROM ${table} WHERE minute < ?`)
        .get(old + 1)!.n
    const policy = countersPolicy()
    // The second of the four deletes fails once (a real error from SQLite, as a full disk's would).
    store.db.run(
      "CREATE TRIGGER full BEFORE DELETE ON usage_minute_costs BEGIN SELECT RAISE(ABORT, 'full'); END",
    )
    await expect(store.pruneHistory(policy)).rejects.toThrow('full')
    expect(left('usage_minute_costs')).toBe(1)
    store.db.run('DROP TRIGGER full')
    // Same cutoff, next chunk: the counters are still pruned.
    await store.pruneHistory(policy)
    expect(left('usage_minutes')).toBe(0)
    expect(left('usage_minute_costs')).toBe(0)
    // A clock that jumped a day ahead and was set back: the next cutoff, earlier than that day's, still prunes.
    policy.logBefore += 86_400_000
    await store.pruneHistory(policy)
    policy.logBefore -= 86_400_000 - 3_600_000
    store.db.run('INSERT INTO usage_minutes (account_id, minute, model, requests) VALUES (1, ?, ?, 1)', [
      old,
      'm',
    ])
    await store.pruneHistory(policy)
    expect(left('usage_minutes')).toBe(0)
    await store.close()
  })

  test('sessions expire and can be deleted', async () => {
    const store = open()
    await store.createSession('h1', { kind: 'admin', keyId: null, expiresAt: END + 1000, binding: 'b1' }, END)
    expect(await store.getSession('h1', END)).toEqual({
      kind: 'admin',
      keyId: null,
      expiresAt: END + 1000,
      binding: 'b1',
    })
    expect(await store.getSession('h1', END + 1000)).toBeNull()
    await store.createSession('h2', { kind: 'key', keyId: 'k', expiresAt: END + 5000, binding: 'b2' }, END)
    await store.deleteSession('h2')
    expect(await store.getSession('h2', END)).toBeNull()
  })
})
