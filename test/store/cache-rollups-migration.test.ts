/**
 * SQLite's v18 gives the hourly and daily rollups the prompt cache's tokens (migrations-v18.ts):
 * a database from before keeps its buckets, their cache tokens 0, and later outcomes add theirs
 * to the same rows (PostgreSQL's v20: test/e2e/admin/admin-cache-tokens.test.ts on a migrated database).
 */
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { openSqliteStore } from '../../src/store/index.ts'
import { migrate } from '../../src/store/sqlite/migrations.ts'
import { newRequestId } from '../../src/util/ids.ts'
import { tempDir } from '../support/config-doc.ts'

const T0 = Date.parse('2026-03-01T10:00:00Z')

test('buckets from before v18 keep their figures with 0 cache tokens; new outcomes add theirs', async () => {
  const path = join(tempDir(), 'db.sqlite')
  const old = new Database(path, { create: true })
  migrate(old, T0, 17)
  old.run(
    `INSERT INTO usage_daily (t, account_id, key_id, model, surface, requests, prompt_tokens, completion_tokens)
     VALUES (?, 1, 'k1', 'x/a', 'chat', 1, 10, 5)`,
    [T0 - (T0 % 86_400_000)],
  )
  old.close()

  const store = openSqliteStore({ path, now: T0 })
  const a = await store.createAccount({
    name: 'a',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  expect(a.id).toBe(1)
  const r = await store.admit({
    accountId: a.id,
    keyId: 'k1',
    requestId: 'r',
    gatewayId: newRequestId(),
    model: 'x/a',
    stream: false,
    rpm: null,
    rpd: null,
    suspension: null,
    now: T0 + 1000,
  })
  if (!r.admitted) throw new Error('not admitted')
  await store.complete([
    {
      requestId: 'r',
      gatewayId: r.gatewayId,
      surface: 'chat',
      stream: false,
      counted: { accountId: a.id, keyId: 'k1', model: 'x/a', at: r.loggedAt! },
      status: 200,
      promptTokens: 1300,
      completionTokens: 50,
      cachedTokens: 1000,
      cacheWriteTokens: 200,
      latencyMs: 10,
      ttftMs: null,
      errorCode: null,
    },
  ])
  const [day] = await store.usageSeries({ bucket: 'day', from: T0, to: T0 + 1, groupBy: 'none', keyId: 'k1' })
  expect(day!.points[0]).toMatchObject({
    requests: 2,
    prompt_tokens: 1310,
    completion_tokens: 55,
    cached_tokens: 1000,
    cache_write_tokens: 200,
  })
  store.close()
})
