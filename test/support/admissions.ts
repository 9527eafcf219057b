/**
 * Admissions as the store takes them, for store-level tests: an account's store on a fresh file,
 * and an admission whose account and time vary, the rest fixed unless given (key `key_1`, no
 * request windows, no suspension, no charge).
 */
import { join } from 'node:path'
import type { ChargeRequest } from '../../src/limits/types.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import type { AdmitInput, Completion } from '../../src/store/types.ts'
import { newRequestId } from '../../src/util/ids.ts'
import { tempDir } from './config-doc.ts'

export const admission = (accountId: number, now: number, over: Partial<AdmitInput> = {}): AdmitInput => ({
  accountId,
  keyId: 'key_1',
  model: 'demo/echo',
  requestId: 'r',
  gatewayId: newRequestId(),
  stream: false,
  now,
  rpm: null,
  rpd: null,
  suspension: null,
  ...over,
})

/**
 * `n` outcomes of admitted requests as the usage flush writes them (200, 10 + 5 tokens), on
 * `accountId` and key `key_1`, the i-th at `at + i`, gateway ids `${tag}${i}`.
 */
export const completions = (accountId: number, n: number, tag: string, at: number): Completion[] =>
  Array.from({ length: n }, (_, i) => ({
    gatewayId: `${tag}${i}`,
    requestId: `request-${tag}-${i}`,
    surface: 'chat',
    stream: false,
    status: 200,
    promptTokens: 10,
    completionTokens: 5,
    latencyMs: 1,
    ttftMs: null,
    errorCode: null,
    counted: { accountId, keyId: 'key_1', model: 'demo/echo', at: at + i },
  }))

export const chargedAdmission = (
  accountId: number,
  now: number,
  charge: ChargeRequest,
  keyId = 'key_1',
): AdmitInput => admission(accountId, now, { keyId, charge })

/** A SQLite store on a fresh file with one account, `acme` on `free`, made at `now`. */
export async function storeWithAccount(now: number) {
  const store = openSqliteStore({ path: join(tempDir(), 'db.sqlite'), now })
  const a = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: now,
    planExpiresAt: null,
    now,
  })
  return { store, accountId: a.id }
}
