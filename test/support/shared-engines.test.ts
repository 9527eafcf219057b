/**
 * @module
 * The shared PostgreSQL's clones (support/shared-engines.ts): tests started side by side each get a
 * database of their own. Two clone() calls at once once both awaited the one prefetched clone and
 * were handed the same database (a test then met another's account: `account_exists`).
 */
import { describe, expect, test } from 'bun:test'
import { skipWithout } from './engines.ts'
import { sharedPostgres } from './shared-engines.ts'

describe.skipIf(skipWithout(['postgres'], 'shared-engines.test.ts'))('sharedPostgres', () => {
  test('clone() calls at once hand out distinct databases', async () => {
    const pg = await sharedPostgres()
    try {
      // After a first clone a prefetched one waits; the next calls at once must not share it.
      const first = await pg.clone()
      const urls = await Promise.all([pg.clone(), pg.clone(), pg.clone()])
      expect(new Set([first, ...urls]).size).toBe(4)
    } finally {
      await pg.release()
    }
  })
})
