/**
 * The usage recorder writes each outcome once. A flush writes the outcomes batch, then the
 * rate-limited events and the refusals, each in its own transaction; when one of the later writes
 * found the store busy, the whole flush was retried, outcomes included — already committed, so on
 * SQLite (no unique log id since schema v6) the request log got the rows twice and `/v1/usage`
 * counted the tokens and the cost twice. Against a real SQLite store whose rate-limited write is
 * made to find the database busy once.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { type Completion, openSqliteStore, StoreBusyError } from '../../src/store/index.ts'
import { UsageRecorder } from '../../src/usage/recorder.ts'
import { createLogger } from '../../src/util/log.ts'
import { admission } from '../support/admissions.ts'
import { tempDir } from '../support/config-doc.ts'

test('an outcome already written is not written again when a later write of the same flush found the store busy', async () => {
  const now = Date.now()
  const store = openSqliteStore({ path: join(tempDir(), 'db.sqlite'), now })
  const a = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: now,
    planExpiresAt: null,
    now,
  })
  const r = await store.admit(admission(a.id, now))
  if (!r.admitted) throw new Error('refused')
  let busy = 1
  const recordRateLimited = store.recordRateLimited.bind(store)
  store.recordRateLimited = async (batch) => {
    if (busy-- > 0) throw new StoreBusyError(5_000)
    return recordRateLimited(batch)
  }
  const lines: string[] = []
  const recorder = new UsageRecorder(
    store,
    60_000,
    createLogger('error', (l) => lines.push(l)),
  )
  const outcome: Completion = {
    gatewayId: r.gatewayId,
    requestId: 'r',
    surface: 'chat',
    stream: false,
    status: 200,
    promptTokens: 10,
    completionTokens: 20,
    costMicros: 7,
    latencyMs: 1,
    ttftMs: null,
    errorCode: null,
    counted: { accountId: a.id, keyId: 'key_1', model: 'demo/echo', at: r.at ?? now },
  }
  recorder.record(outcome)
  recorder.recordRateLimited({
    accountId: a.id,
    keyId: 'key_1',
    model: 'demo/echo',
    surface: 'chat',
    at: now,
  })
  await recorder.flush()
  expect(lines.join('\n')).toContain('usage flush failed')
  await recorder.flush()
  const summary = await store.usageSummary(a.id, now, now - (now % 86_400_000))
  expect(summary.today.total_tokens).toBe(30)
  expect(summary.cost_micros?.today).toBe(7)
  const page = await store.requestLog({ limit: 10 })
  expect(page.rows.filter((x) => x.gatewayId === r.gatewayId)).toHaveLength(1)
  await store.close()
})
