/**
 * A flush asked for while another one runs holds everything recorded before it was asked for.
 * Each flush used to take its batch when it was asked for and then wait behind the running one:
 * a refused charge that asked for a flush while one ran shared that one, which had been taken
 * before the settlement it waited for was recorded; and a flush asked for (at shutdown, say)
 * while the running one found the store busy did not hold the outcomes that one put back — both
 * waited for the next timer (`flushMs`), the reservations held at their whole amount until then,
 * or until the sweeper's bound when the store closed first. Against a real SQLite file whose write
 * lock another process holds.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import type { LimitRow } from '../../src/limits/rows.ts'
import type { ChargeRequest } from '../../src/limits/types.ts'
import { type AdmitResult, type Completion, openSqliteStore } from '../../src/store/index.ts'
import { UsageRecorder } from '../../src/usage/recorder.ts'
import { createLogger } from '../../src/util/log.ts'
import { chargedAdmission } from '../support/admissions.ts'
import { tempDir } from '../support/config-doc.ts'
import { holdWriteLock } from '../support/lock.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')
const TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 3_000 }
/** 100 input + 300 output tokens reserved; each request settles to 150. */
const CHARGE: ChargeRequest = { rows: [TPM], inputTokens: 100, wantOutput: 300, price: null }

async function setup(busyTimeoutMs: number) {
  const path = join(tempDir(), 'db.sqlite')
  const store = openSqliteStore({ path, now: T0, busyTimeoutMs })
  const { id: accountId } = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  const admit = async (i: number) => {
    const r = await store.admit(chargedAdmission(accountId, T0 + i, CHARGE))
    if (!r.admitted) throw new Error('refused')
    return r
  }
  const used = async () =>
    (await store.rowStates({ accountId, keyId: 'key_1', now: T0 + 1_000, rows: [TPM] }))[0]!.used
  // The timer never fires within a test: only the flushes asked for write.
  const recorder = new UsageRecorder(
    store,
    600_000,
    createLogger('error', () => {}),
  )
  const done = (r: AdmitResult & { admitted: true }): Completion => ({
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
    counted: { accountId, keyId: 'key_1', model: 'demo/echo', at: r.loggedAt ?? r.at ?? T0 },
    settlement: { handle: r.reservation!.handle, accountId, tokens: 150, micros: 0 },
  })
  return { path, store, accountId, admit, used, recorder, done }
}

test('a refused charge that asks for a flush while one runs gets a flush holding the settlement recorded since', async () => {
  const { path, store, accountId, admit, used, recorder, done } = await setup(5_000)
  const first = await admit(0)
  const second = await admit(1)
  expect(await used()).toBe(800)
  const lock = await holdWriteLock(path, 300)
  recorder.record(done(first))
  // One refusal's flush is running (waiting for the lock) when the second request ends …
  const running = recorder.flush()
  await Bun.sleep(20)
  recorder.record(done(second))
  // … and another refusal of the account waits for a flush: it must hold that settlement.
  await recorder.flush()
  expect(await used()).toBe(300)
  expect(recorder.settling(accountId)).toBe(false)
  await running
  await lock.released
  store.close()
}, 20_000)

test('a flush asked for while the running one finds the store busy writes what that one put back', async () => {
  // The running flush gives up after 2 s; the lock goes at 3 s, within the next flush's wait.
  const { path, store, accountId, admit, used, recorder, done } = await setup(2_000)
  const first = await admit(0)
  const lock = await holdWriteLock(path, 3_000)
  recorder.record(done(first))
  const running = recorder.flush()
  await Bun.sleep(20)
  // Shutdown's flush, say: asked for while the running one waits for the lock.
  await recorder.flush()
  expect(await used()).toBe(150)
  expect(recorder.settling(accountId)).toBe(false)
  const page = await store.requestLog({ limit: 10 })
  expect(page.rows.filter((x) => x.gatewayId === first.gatewayId && x.status === 200)).toHaveLength(1)
  await running
  await lock.released
  store.close()
}, 20_000)
