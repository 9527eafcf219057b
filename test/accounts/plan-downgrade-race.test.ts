/**
 * A downgrade at a plan's end is written lazily, by the first request (or view) that sees the end.
 * Found by an audit: the write was unconditional, so requests on several processes (`--workers`,
 * replicas) that reached the end together each recorded the downgrade again, and one that had
 * read the account before an operator renewed it put the account back on the free plan after the
 * renewal. The write now happens only while the account is still on the plan and end it was read
 * with; otherwise the account is judged as it now is.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { currentPlan } from '../../src/accounts/plans.ts'
import { buildDeps } from '../../src/app/build.ts'
import { authenticateToken } from '../../src/auth/authenticate.ts'
import { parseConfig } from '../../src/config/index.ts'
import { openStores } from '../../src/store/index.ts'
import { DAY_MS, ManualClock } from '../../src/util/clock.ts'
import { silentLogger } from '../../src/util/log.ts'
import { backendDoc, backends } from '../support/backends.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'

// Admissions in Redis change nothing here: accounts live in the database either way.
const all = backends('plan-downgrade-race.test.ts').filter((b) => b.name !== 'postgres+redis')
const T0 = Date.parse('2026-03-01T00:00:00Z')

/** Two gateway processes' worth of deps on one database, driven by one manual clock. */
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
    clock,
    config,
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
  describe.skipIf(b.skip)(`plan end on ${b.name}`, () => {
    test('requests on two processes reaching the end together record the downgrade once', async () => {
      const { clock, procs, close } = await twoProcesses(await b.fresh())
      const [p, q] = procs
      try {
        await p.accounts.createAccount('acme', 'pro', 1)
        const { key } = await p.accounts.createKey('acme')
        // Both processes hold the account, on pro, in their caches.
        for (const d of procs) expect((await authenticateToken(d, key)).plan.name).toBe('pro')
        clock.advance(DAY_MS)
        const plans = await Promise.all(
          [p, q, p, q, p, q].map((d) => authenticateToken(d, key).then((a) => a.plan.name)),
        )
        expect(plans).toEqual(['free', 'free', 'free', 'free', 'free', 'free'])
        const account = (await p.store.getAccount('acme'))!
        const history = await p.store.planHistory(account.id)
        expect(history.map((h) => `${h.plan}: ${h.reason}`)).toEqual([
          'pro: created',
          'free: expired: pro downgraded to free',
        ])
        expect(history[1]!.startedAt).toBe(T0 + DAY_MS)
      } finally {
        await close()
      }
    }, 30_000)

    test('a renewal made after the expired plan was read is kept: the late downgrade writes nothing', async () => {
      const { clock, config, procs, close } = await twoProcesses(await b.fresh())
      const [p, q] = procs
      try {
        await p.accounts.createAccount('acme', 'pro', 1)
        clock.advance(DAY_MS)
        // q read the account at its end (pro, expired), then the operator renewed it on p.
        const stale = (await q.store.getAccount('acme'))!
        expect((await p.accounts.setPlan('acme', 'pro', 30)).plan).toBe('pro')
        const s = await currentPlan(q.store, config, stale, clock.now())
        expect(s).toMatchObject({ name: 'pro', status: 'active', expiresAt: clock.now() + 30 * DAY_MS })
        expect(await p.store.getAccount('acme')).toMatchObject({ plan: 'pro' })
        const history = await p.store.planHistory(stale.id)
        expect(history.map((h) => h.plan)).toEqual(['pro', 'pro'])
      } finally {
        await close()
      }
    }, 30_000)
  })
}
