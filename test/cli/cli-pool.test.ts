/**
 * A one-shot command on PostgreSQL opens two connections, not the server's pool (`database.pool_size`,
 * 10 by default): Bun.SQL opens every connection of a pool at its first query, each a backend the
 * server forks (~50 ms of its CPU on this machine, docs/benchmarks/suite-cpu.md, stop 59 pg59).
 * Counted by the server itself: `pg_stat_database.sessions` for the command's database.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { CLI_POOL_SIZE } from '../../src/cli/context.ts'
import { cli } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { skipWithout } from '../support/engines.ts'
import { writeConfig } from '../support/process.ts'
import { sharedPostgres } from '../support/shared-engines.ts'

const dir = tempDir()
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe.skipIf(skipWithout(['postgres'], 'the CLI’s PostgreSQL connections'))(
  'a command on PostgreSQL',
  () => {
    test('opens two connections, not the pool of ten the config gives a server', async () => {
      const pg = await sharedPostgres()
      const url = await pg.clone()
      const name = new URL(url).pathname.slice(1)
      const doc = testConfigDoc()
      const config = writeConfig(dir, { ...doc, database: { url, pool_size: 10 } })
      const admin = new Bun.SQL(url.replace(`/${name}`, '/postgres'), { max: 1 })
      // Sessions are counted as they end; the command's backends end after it has closed its pool.
      const sessions = async () => {
        await admin`SELECT pg_stat_clear_snapshot()`
        const [row] = await admin`SELECT sessions::int AS n FROM pg_stat_database WHERE datname = ${name}`
        return (row?.n as number) ?? 0
      }
      try {
        const before = await sessions()
        const created = await cli(['accounts', 'create', 'pool-check', '--plan', 'free', '--config', config])
        expect(created.stderr).toContain('"outcome":"ok"')
        const listed = await cli(['accounts', 'list', '--config', config])
        expect(listed.code).toBe(0)
        expect(listed.stdout).toContain('pool-check')
        let opened = 0
        for (let i = 0; i < 100; i++) {
          opened = (await sessions()) - before
          if (opened >= 2 * CLI_POOL_SIZE) break
          await Bun.sleep(50)
        }
        // Give a late session end a moment to show: more than two a command is what must not be.
        await Bun.sleep(300)
        opened = (await sessions()) - before
        expect(opened).toBeGreaterThan(0)
        expect(opened).toBeLessThanOrEqual(2 * CLI_POOL_SIZE)
      } finally {
        await admin.close()
        await pg.release()
      }
    }, 60_000)
  },
)
