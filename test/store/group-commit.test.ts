import { describe, expect, test } from 'bun:test'
import type { AdmitInput } from '../../src/store/types.ts'
import { admission, storeWithAccount } from '../support/admissions.ts'

const T0 = Date.parse('2026-03-01T00:00:00Z')

async function setup() {
  const { store, accountId } = await storeWithAccount(T0)
  await store.createKey({
    id: 'key_1',
    accountId,
    name: null,
    prefix: 'sk-sy-abcdef',
    hash: 'h1',
    now: T0,
  })
  const input = (i: number, rpm: number | null): AdmitInput =>
    admission(accountId, T0 + i, { requestId: `req_${i}`, rpm })
  return { store, input }
}

describe('sqlite store: admissions requested together share one commit', () => {
  test('20 admissions in one turn on rpm 5 → exactly the first 5 admitted, in order', async () => {
    const { store, input } = await setup()
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.admit(input(i, 5))))
    expect(results.map((r) => r.admitted)).toEqual([...Array(5).fill(true), ...Array(15).fill(false)])
    const admitted = results.filter((r) => r.admitted)
    expect(admitted.map((r) => (r.admitted ? r.minute.remaining : -1))).toEqual([4, 3, 2, 1, 0])
    expect((await store.windows(input(0, 5).accountId, T0 + 100, 5, null)).minute.used).toBe(5)
    store.close()
  })

  test('an admission that fails rejects only its own caller; the rest of the batch is committed', async () => {
    const { store, input } = await setup()
    const broken = { ...input(1, null), accountId: null as unknown as number } // NOT NULL violation
    const settled = await Promise.allSettled([
      store.admit(input(0, null)),
      store.admit(broken),
      store.admit(input(2, null)),
    ])
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((await store.windows(input(0, null).accountId, T0 + 100, 10, null)).minute.used).toBe(2)
    store.close()
  })

  test('close() commits admissions still queued', async () => {
    const { store, input } = await setup()
    const pending = store.admit(input(0, null))
    store.close()
    expect((await pending).admitted).toBe(true)
  })
})
