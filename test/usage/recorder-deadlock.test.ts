/**
 * A usage flush that PostgreSQL picks as a deadlock's victim (SQLSTATE 40P01) is put back for the
 * next flush, like one that found the store busy: its transaction was rolled back whole, so the
 * retry counts once. It was taken for a failure no retry fixes and dropped — the outcomes gone
 * from the log and their reservations held at their whole amount until the sweep settled them so.
 * A real deadlock on a real server: another session holds the request's row and then asks for the
 * account row the flush's settlement holds.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { parseConfig } from '../../src/config/index.ts'
import type { LimitRow } from '../../src/limits/rows.ts'
import type { ChargeRequest } from '../../src/limits/types.ts'
import { type Completion, openStores, type Store } from '../../src/store/index.ts'
import { UsageRecorder } from '../../src/usage/recorder.ts'
import { createLogger } from '../../src/util/log.ts'
import { chargedAdmission } from '../support/admissions.ts'
import { backendDoc } from '../support/backends.ts'
import { testConfigDoc } from '../support/config-doc.ts'
import { skipWithout } from '../support/engines.ts'
import { type SharedPostgres, sharedPostgres } from '../support/shared-engines.ts'

const skip = skipWithout(['postgres'], 'recorder-deadlock.test.ts (a deadlock on PostgreSQL)')

const TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 100_000 }
/** 100 input + 300 output tokens reserved; the request settles to 150. */
const CHARGE: ChargeRequest = { rows: [TPM], inputTokens: 100, wantOutput: 300, price: null }

let pg: SharedPostgres | null = null
let url = ''
let store: Store | null = null
beforeAll(async () => {
  if (skip) return
  pg = await sharedPostgres()
  url = await pg.clone()
  store = await openStores(parseConfig(backendDoc(testConfigDoc(), { databaseUrl: url }), 'test'), {
    callerTime: true,
  })
}, 60_000)
afterAll(async () => {
  await store?.close()
  await pg?.release()
})

test.skipIf(skip)(
  'a flush chosen as a deadlock victim is put back and written by the next one',
  async () => {
    const s = store!
    const now = Date.now()
    const { id: accountId } = await s.createAccount({
      name: 'acme',
      plan: 'free',
      planStartedAt: now,
      planExpiresAt: null,
      now,
    })
    const r = await s.admit(chargedAdmission(accountId, now, CHARGE))
    if (!r.admitted) throw new Error('refused')
    const used = async () =>
      (await s.rowStates({ accountId, keyId: 'key_1', now: now + 1_000, rows: [TPM] }))[0]!.used
    expect(await used()).toBe(400)
    const lines: Array<Record<string, unknown>> = []
    const recorder = new UsageRecorder(
      s,
      600_000,
      createLogger('error', (l) => lines.push(JSON.parse(l))),
    )
    const done: Completion = {
      gatewayId: r.gatewayId,
      requestId: 'r',
      surface: 'chat',
      stream: false,
      status: 200,
      promptTokens: 100,
      completionTokens: 50,
      latencyMs: 1,
      ttftMs: null,
      errorCode: null,
      counted: { accountId, keyId: 'key_1', model: 'demo/echo', at: r.loggedAt ?? r.at ?? now },
      settlement: { handle: r.reservation!.handle, accountId, tokens: 150, micros: 0 },
    }
    recorder.record(done)

    const other = new SQL(url, { max: 1 })
    let flushed: Promise<void> | null = null
    await other.begin(async (tx) => {
      // This session waits 10 s before looking for a deadlock; the flush's waits 1 s (the default):
      // the flush, which waits first, is the one PostgreSQL rolls back.
      await tx`SET LOCAL deadlock_timeout = '10s'`
      await tx`SELECT 1 FROM requests WHERE gateway_id = ${r.gatewayId} FOR UPDATE`
      // The flush's settlement locks the account, then waits for the request's row …
      flushed = recorder.flush()
      await waitForLockWait(tx)
      // … which this session holds while it asks for the account's: a cycle.
      await tx`SELECT 1 FROM accounts WHERE id = ${accountId} FOR UPDATE`
    })
    await other.close()
    await flushed
    const failed = lines.find((l) => l.msg === 'usage flush failed')
    expect(failed).toMatchObject({ retrying: true })
    expect(String(failed?.error)).toContain('40P01')
    expect(recorder.settling(accountId)).toBe(true)

    await recorder.flush()
    expect(recorder.settling(accountId)).toBe(false)
    expect(await used()).toBe(150)
    const row = (await s.requestLog({ limit: 10 })).rows.find((x) => x.gatewayId === r.gatewayId)
    expect(row).toMatchObject({ status: 200, completionTokens: 50 })
  },
  30_000,
)

/** Until a session other than `tx`'s waits for a lock. */
async function waitForLockWait(tx: SQL): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [w] =
      await tx`SELECT COUNT(*)::int AS n FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()`
    if (w.n > 0) return
    await Bun.sleep(10)
  }
  throw new Error('the flush never waited for the row lock')
}
