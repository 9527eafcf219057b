/**
 * Renewals of one account at the same moment each add their days. Found by an audit: `setPlan`
 * read the account, computed the new end from the end it read and wrote it unconditionally, so
 * two renewals made together (two `accounts set-plan --days N`, two admin API calls, on one
 * process or two) both extended from the same end and one renewal's days were lost: a customer
 * who paid twice got one term. A plan change is now written only while the account is as it was
 * decided on, and decided again on the stored account when another change overtook it.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { buildDeps } from '../../src/app/build.ts'
import { parseConfig } from '../../src/config/index.ts'
import { openStores } from '../../src/store/index.ts'
import { DAY_MS, ManualClock } from '../../src/util/clock.ts'
import { silentLogger } from '../../src/util/log.ts'
import { backendDoc, backends } from '../support/backends.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'

// Admissions in Redis change nothing here: accounts live in the database either way.
const all = backends('plan-renewal-race.test.ts').filter((b) => b.name !== 'postgres+redis')
const T0 = Date.parse('2026-03-01T00:00:00Z')

/** Two gateway processes' worth of deps on one database. */
async function twoProcesses(urls: { databaseUrl?: string }) {
  const clock = new ManualClock(T0)
  const path = join(tempDir(), 'plans.db')
  const config = parseConfig(backendDoc(testConfigDoc({ database: { path } }), urls), 'test')
  const open = async () =>
    buildDeps(config, {
      clock,
      log: silentLogger,
      store: urls.databaseUrl ? await openStores(config, { callerTime: true }) : undefined,
    })
  const procs = [await open(), await open()] as const
  return {
    procs,
    async close() {
      for (const d of procs) {
        await d.recorder.flush()
        await d.store.close()
      }
    },
  }
}

for (const b of all) {
  describe.skipIf(b.skip)(`plan renewals on ${b.name}`, () => {
    test('two renewals at the same moment on two processes add both terms; the history has both', async () => {
      const { procs, close } = await twoProcesses(await b.fresh())
      const [p, q] = procs
      try {
        await p.accounts.createAccount('acme', 'pro', 30)
        const end = T0 + 30 * DAY_MS
        await Promise.all([p.accounts.setPlan('acme', 'pro', 10), q.accounts.setPlan('acme', 'pro', 10)])
        const account = (await p.store.getAccount('acme'))!
        expect(account.planExpiresAt).toBe(end + 20 * DAY_MS)
        const history = await p.store.planHistory(account.id)
        expect(history.map((h) => `${h.plan}: ${h.reason}`)).toEqual([
          'pro: created',
          'pro: renewed',
          'pro: renewed',
        ])
        // The second renewal extends from where the first ended.
        expect(history.map((h) => h.expiresAt)).toEqual([end, end + 10 * DAY_MS, end + 20 * DAY_MS])
      } finally {
        await close()
      }
    }, 30_000)

    test('a change and a renewal made together are applied one after the other', async () => {
      const { procs, close } = await twoProcesses(await b.fresh())
      const [p, q] = procs
      try {
        await p.accounts.createAccount('acme', 'pro', 30)
        // Each: change from pro to basic, or, the account being on basic already, renew basic.
        await Promise.all([p.accounts.setPlan('acme', 'basic', 5), q.accounts.setPlan('acme', 'basic', 5)])
        const account = (await p.store.getAccount('acme'))!
        expect(account).toMatchObject({ plan: 'basic', planExpiresAt: T0 + 10 * DAY_MS })
        const history = await p.store.planHistory(account.id)
        expect(history.map((h) => `${h.plan}: ${h.reason}`)).toEqual([
          'pro: created',
          'basic: changed from pro',
          'basic: renewed',
        ])
      } finally {
        await close()
      }
    }, 30_000)
  })
}
