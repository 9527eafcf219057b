import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { AccountService } from '../../src/accounts/service.ts'
import { parseConfig } from '../../src/config/index.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { LATEST_VERSION } from '../../src/store/sqlite/migrations.ts'
import { ManualClock } from '../../src/util/clock.ts'
import { admission } from '../support/admissions.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'

const T0 = Date.parse('2026-03-01T00:00:00Z')

function setup() {
  const dir = tempDir()
  const clock = new ManualClock(T0)
  const store = openSqliteStore({ path: join(dir, 'db.sqlite'), now: T0 })
  const svc = new AccountService(store, parseConfig(testConfigDoc()), clock)
  return { dir, clock, store, svc }
}

const admitArgs = (accountId: number, keyId: string, now: number, rpm: number | null, rpd: number | null) =>
  admission(accountId, now, { keyId, rpm, rpd })

describe('sqlite store', () => {
  test('migrations are versioned and re-opening is idempotent', () => {
    const { dir, store } = setup()
    store.close()
    const again = openSqliteStore({ path: join(dir, 'db.sqlite') })
    const v = again.db.query('SELECT version FROM schema_migrations').all()
    expect(v).toEqual(Array.from({ length: LATEST_VERSION }, (_, i) => ({ version: i + 1 })))
    expect(again.db.query('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
    again.close()
  })

  test('the raw key is stored nowhere in the database files, only its hash', async () => {
    const { dir, store, svc } = setup()
    await svc.createAccount('alice', 'free')
    const k = await svc.createKey('alice', 'laptop')
    const rotated = await svc.rotateKey(k.id)
    expect(k.key).toMatch(/^sk-sy-[0-9A-Za-z]{40}$/)
    expect(rotated.key).not.toBe(k.key)
    store.close()
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f)).toString('latin1')
      expect(bytes.includes(k.key)).toBe(false)
      expect(bytes.includes(rotated.key)).toBe(false)
      expect(bytes.includes(k.key.slice(6))).toBe(false)
    }
  })

  test('rolling minute window: exact count, retry time from the oldest request', async () => {
    const { store, svc, clock } = setup()
    const a = await svc.createAccount('bob', 'free')
    const k = await svc.createKey('bob')
    const results = []
    for (let i = 0; i < 7; i++) {
      results.push(await store.admit(admitArgs(a.id, k.id, clock.now(), 5, 100)))
      clock.advance(1000)
    }
    expect(results.map((r) => r.admitted)).toEqual([true, true, true, true, true, false, false])
    const r5 = results[5]!
    if (r5.admitted) throw new Error('unreachable')
    expect(r5.window).toBe('minute')
    expect(r5.retryAt).toBe(T0 + 60_000)
    // At T0+60s the first request leaves the window: exactly one slot frees.
    clock.set(T0 + 60_000)
    expect((await store.admit(admitArgs(a.id, k.id, clock.now(), 5, 100))).admitted).toBe(true)
    expect((await store.admit(admitArgs(a.id, k.id, clock.now(), 5, 100))).admitted).toBe(false)
  })

  test('large windows count exactly, and a clock stepping back does not open extra slots', async () => {
    const { store, svc, clock } = setup()
    const a = await svc.createAccount('big', 'free')
    const k = await svc.createKey('big')
    let admitted = 0
    for (let i = 0; i < 1200; i++) {
      if ((await store.admit(admitArgs(a.id, k.id, clock.now(), 1000, null))).admitted) admitted++
      clock.advance(10)
    }
    expect(admitted).toBe(1000)
    const w = await store.windows(a.id, clock.now(), 1000, null)
    expect(w.minute).toMatchObject({ used: 1000, remaining: 0, resetAt: T0 + 60_000 })
    // Admitted at T0, T0+10 ms, …; at T0+60.01 s the ones at T0 and T0+10 ms have left.
    clock.set(T0 + 60_010)
    expect((await store.windows(a.id, clock.now(), 1000, null)).minute.used).toBe(998)
    clock.set(T0 + 60_010 - 30_000)
    expect((await store.admit(admitArgs(a.id, k.id, clock.now(), 1000, null))).admitted).toBe(false)
  })

  test('day window and unlimited windows', async () => {
    const { store, svc, clock } = setup()
    const a = await svc.createAccount('carol', 'free')
    const k = await svc.createKey('carol')
    for (let i = 0; i < 3; i++) {
      expect((await store.admit(admitArgs(a.id, k.id, clock.now(), null, 3))).admitted).toBe(true)
      clock.advance(61_000)
    }
    const r = await store.admit(admitArgs(a.id, k.id, clock.now(), null, 3))
    expect(r).toMatchObject({ admitted: false, window: 'day', retryAt: T0 + 86_400_000 })
    for (let i = 0; i < 50; i++)
      expect((await store.admit(admitArgs(a.id, k.id, clock.now(), null, null))).admitted).toBe(true)
  })

  test('suspension after too many rejections', async () => {
    const { store, svc, clock } = setup()
    const a = await svc.createAccount('dave', 'free')
    const k = await svc.createKey('dave')
    const susp = { maxRejections: 3, windowMs: 60_000, durationMs: 300_000 }
    expect(
      (await store.admit({ ...admitArgs(a.id, k.id, clock.now(), 1, null), suspension: susp })).admitted,
    ).toBe(true)
    const outs = []
    for (let i = 0; i < 4; i++)
      outs.push(await store.admit({ ...admitArgs(a.id, k.id, clock.now(), 1, null), suspension: susp }))
    expect(outs.map((o) => (o.admitted ? 'ok' : o.suspendedUntil))).toEqual([null, null, null, T0 + 300_000])
    expect((await store.getKey(k.id))!.suspendedUntil).toBe(T0 + 300_000)
  })

  test('countRejection shares the rate-limit refusals counter and its window', async () => {
    const { store, svc, clock } = setup()
    const a = await svc.createAccount('erin', 'free')
    const k = await svc.createKey('erin')
    const susp = { maxRejections: 3, windowMs: 60_000, durationMs: 300_000 }
    expect(
      await store.countRejection({ accountId: a.id, keyId: k.id, now: clock.now(), suspension: susp }),
    ).toBeNull()
    // A window later the count starts again.
    clock.advance(61_000)
    expect(
      await store.countRejection({ accountId: a.id, keyId: k.id, now: clock.now(), suspension: susp }),
    ).toBeNull()
    expect(
      await store.countRejection({ accountId: a.id, keyId: k.id, now: clock.now(), suspension: susp }),
    ).toBeNull()
    expect(
      await store.admit({ ...admitArgs(a.id, k.id, clock.now(), 1, null), suspension: susp }),
    ).toMatchObject({
      admitted: true,
    })
    // One rate-limit refusal plus two invalid requests: the fourth refusal in the window suspends.
    expect(
      await store.admit({ ...admitArgs(a.id, k.id, clock.now(), 1, null), suspension: susp }),
    ).toMatchObject({ admitted: false, suspendedUntil: null })
    const until = await store.countRejection({
      accountId: a.id,
      keyId: k.id,
      now: clock.now(),
      suspension: susp,
    })
    expect(until).toBe(clock.now() + 300_000)
    expect((await store.getKey(k.id))!.suspendedUntil).toBe(until)
  })
})
