/**
 * A one-shot command on PostgreSQL opens the connections its calls need — one, as it runs them
 * one after another — not the pool the config allows a server (`database.pool_size`, 10 here):
 * each connection is a backend the server forks (~50 ms of its CPU on this machine,
 * docs/benchmarks/suite-cpu.md, stop 59 pg59), and Bun.SQL alone would open all ten at the first
 * query (src/store/postgres/pool.ts). Counted by the server itself: `pg_stat_database.sessions`
 * for the command's database.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
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
    test('opens one connection, not the pool of ten the config allows a server', async () => {
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
        // Both commands have exited; their sessions are counted as the backends end. Read until
        // the count has held for half a second: a late end would make it more than one a command.
        let opened = 0
        for (let i = 0, held = 0; i < 200 && held < 10; i++) {
          const now = (await sessions()) - before
          held = now === opened && now > 0 ? held + 1 : 0
          opened = now
          await Bun.sleep(50)
        }
        expect(opened).toBe(2)
      } finally {
        await admin.close()
        await pg.release()
      }
    }, 60_000)
  },
)
