/**
 * The overview's provider figures read at most SCAN request-log rows, whatever the log holds:
 * with more in the window, the answer counts exactly SCAN (the newest), says it is not complete,
 * and starts where the rows read start.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { seedRequestLog } from '../../scripts/bench/request-log-seed.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { providerHealth, SCAN } from '../../src/usage/overview.ts'
import { tempDir } from '../support/config-doc.ts'

test('provider health reads at most SCAN rows, newest first, and says so', async () => {
  const now = Date.parse('2026-03-01T12:00:00Z')
  const store = openSqliteStore({ path: join(tempDir(), 'db.sqlite'), now })
  const n = SCAN + 10_000
  seedRequestLog(store.db, n, now, 3_600_000) // n rows over the last hour
  const deps = { store, config: { providers: [] } }
  const started = performance.now()
  const h = await providerHealth(deps, { hours: '24' }, now)
  const ms = performance.now() - started
  expect(h.scanned).toBe(SCAN)
  expect(h.complete).toBe(false)
  // The oldest row read: the (n − SCAN)th of the seeded hour, not the window's start.
  expect(Date.parse(h.from!)).toBeGreaterThan(now - 3_600_000)
  expect(h.data.reduce((s: number, p: any) => s + p.requests, 0)).toBe(SCAN)
  // Errors are counted by their code.
  const codes = new Set(h.data.flatMap((p: any) => p.errors_by_code.map((c: any) => c.code)))
  expect(codes.has('code_502')).toBe(true)
  console.log(`provider health over ${n} rows: ${ms.toFixed(1)} ms`)
  store.close()
})
