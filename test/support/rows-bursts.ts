/**
 * Limits as rows across processes (issue 41, DESIGN §5 and §11): RPM is checked and charged in the
 * same atomic admission step as the token rows. Run inside a test that already has processes up
 * on one shared store (tokens-processes-*.test.ts: `serve --workers 2` on SQLite, replicas on
 * PostgreSQL and PostgreSQL + Redis), on accounts of its own (ROWS_PLANS in the config). Bursts of
 * 16 across the processes, each on one account:
 * - RPM 5 + TPM 100,000 → exactly 5 admitted; the TPM row holds what those 5 were billed once
 *   settled, nothing reserved: no refused request left a hold on the token row.
 * - RPM 100 + TPM 1,000 → the TPM refuses (429 naming it) and the RPM row counts exactly the
 *   admitted requests: no refused request was counted on the request row.
 * - a key's own RPM 5 (a key row, charged with the account's token row) + TPM 100,000 → exactly 5.
 */
import { expect } from 'bun:test'
import type { LimitRow } from '../../src/limits/rows.ts'
import type { Store } from '../../src/store/index.ts'
import { adminPost } from './admin-api.ts'
import type { BillingUpstream } from './billing-upstream.ts'
import { SURFACES, tokensRequest } from './tokens-bed.ts'

/** The plans the bursts need, for the test config's `plans`. */
export const ROWS_PLANS = {
  rpm5: { rpm: 5, rpd: null, tpm: 100_000, models: ['*'] },
  tpm1k: { rpm: 100, rpd: null, tpm: 1_000, models: ['*'] },
  keyed: { rpm: null, rpd: null, tpm: 100_000, models: ['*'] },
}

const row = (
  resource: LimitRow['resource'],
  capacity: number,
  scope: LimitRow['scope'] = 'account',
): LimitRow => ({
  resource,
  window: 'minute',
  scope,
  capacity,
})

/**
 * `urls`: the processes (requests go round them); `view`: the test's own store on the same database;
 * `model`: what the bursts ask for (one whose answers stop short of the 200 tokens each request
 * asks for, so a token row settled at the reservation rather than the bill shows).
 */
export async function rowsAreOneAdmission(
  urls: string[],
  view: Store,
  upstream: BillingUpstream,
  model: string,
): Promise<void> {
  const admin = (path: string, body: unknown) => adminPost(urls[0]!, path, body)
  const keys: Record<string, { id: string; key: string }> = {}
  for (const plan of Object.keys(ROWS_PLANS)) {
    await admin('/accounts', { name: plan, plan })
    keys[plan] = await admin('/keys', { account: plan, ...(plan === 'keyed' ? { limits: { rpm: 5 } } : {}) })
  }

  /** 16 at once over the processes and surfaces, streamed or not: each status and body. */
  const burst = (key: string) =>
    Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const r = await tokensRequest(urls[i % urls.length]!, key, SURFACES[i % 3]!, i % 2 === 0, 200, model)
        return { status: r.status, text: await r.text() }
      }),
    )
  /** 429s only, each naming `limit`; returns how many were admitted. */
  const refusedBy = (res: Array<{ status: number; text: string }>, limit: string) => {
    for (const r of res.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(429)
      expect(r.text).toContain(limit)
    }
    return res.filter((r) => r.status === 200).length
  }
  /** The rows once settled (the usage flush): every hold released, the token row at `billed`. */
  const settled = async (account: string, rows: LimitRow[], billed: number, keyId: string | null = null) => {
    const accountId = (await view.getAccount(account))!.id
    const read = () => view.rowStates({ accountId, keyId, now: Date.now(), rows })
    let states = await read()
    const tokens = () => states.find((s) => s.row.resource === 'tokens')!
    for (let t = 0; t < 500 && (tokens().used !== billed || (tokens().reserved ?? 0) > 0); t++) {
      await Bun.sleep(20)
      states = await read()
    }
    return states
  }

  // RPM binds: exactly 5; the token row holds the 5's bill and nothing else.
  let before = upstream.billed.tokens
  expect(refusedBy(await burst(keys.rpm5!.key), 'requests per minute (rpm)')).toBe(5)
  let billed = upstream.billed.tokens - before
  let [requests, tokens] = await settled('rpm5', [row('requests', 5), row('tokens', 100_000)], billed)
  expect(requests!.used).toBe(5)
  expect(tokens!.used).toBe(billed)
  expect(tokens!.reserved ?? 0).toBe(0)

  // The token row binds: the request row counts the admitted requests only.
  before = upstream.billed.tokens
  const admitted = refusedBy(await burst(keys.tpm1k!.key), 'tokens per minute (tpm)')
  expect(admitted).toBeGreaterThanOrEqual(1)
  expect(admitted).toBeLessThan(16)
  billed = upstream.billed.tokens - before
  expect(billed).toBeLessThanOrEqual(1_000)
  ;[requests, tokens] = await settled('tpm1k', [row('requests', 100), row('tokens', 1_000)], billed)
  expect(requests!.used).toBe(admitted)
  expect(tokens!.reserved ?? 0).toBe(0)

  // A key's own RPM, a charge row beside the account's tokens: exactly 5, no stale hold.
  before = upstream.billed.tokens
  expect(refusedBy(await burst(keys.keyed!.key), 'requests per minute (rpm) of this key')).toBe(5)
  billed = upstream.billed.tokens - before
  ;[requests, tokens] = await settled(
    'keyed',
    [row('requests', 5, 'key'), row('tokens', 100_000)],
    billed,
    keys.keyed!.id,
  )
  expect(requests!.used).toBe(5)
  expect(tokens!.used).toBe(billed)
  expect(tokens!.reserved ?? 0).toBe(0)
}
