/**
 * Where the config and the database are, said when they are wrong: a database that cannot be
 * opened was "error: unable to open database file" (or "file is not a database", "disk I/O
 * error", "Failed to connect") with neither the path nor what to do; `--config DIR` was "file
 * not found"; `migrate` on a new SQLite file applied the schema and said "nothing to do".
 */

import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { LATEST_VERSION, migrate } from '../../src/store/sqlite/migrations.ts'
import { cli, cliProcess } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { skipWithout } from '../support/engines.ts'
import { writeConfig } from '../support/process.ts'
import { sharedPostgres } from '../support/shared-engines.ts'

const dir = tempDir()
const config = writeConfig(dir, testConfigDoc())
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const dirDb = join(dir, 'dirdb')
mkdirSync(dirDb)
const corrupt = join(dir, 'corrupt.db')
writeFileSync(corrupt, 'this is not a SQLite database\n'.repeat(40))
const PASSWORD = 'secretpw-4c1f'
const pgUrl = `postgres://sy:${PASSWORD}@127.0.0.1:1/switchyard`

/** --db value → what the message must say besides naming it. */
const BAD: Array<[string, string, RegExp]> = [
  ['a directory', dirDb, /is a directory.*SQLite file/s],
  ['not a database', corrupt, /is not a SQLite database/],
  ['a device', '/dev/null', /is not a regular file/],
  ['PostgreSQL not listening', pgUrl, /PostgreSQL.*127\.0\.0\.1:1.*running/s],
]
const named = (db: string) => (db === pgUrl ? `postgres://sy:***@127.0.0.1:1/switchyard` : db)

describe('a database that cannot be opened is named, with what to check', () => {
  for (const [what, db, says] of BAD) {
    test(`accounts list and migrate --db (${what})`, async () => {
      for (const cmd of [['accounts', 'list'], ['migrate']]) {
        const r = await cli([...cmd, '--config', config, '--db', db])
        expect(r.code, cmd.join(' ')).toBe(1)
        expect(r.stdout).toBe('')
        expect(r.stderr).toContain(named(db))
        expect(r.stderr).toMatch(says)
        expect(r.stderr).not.toContain(PASSWORD)
      }
    })

    // With --json its type and code were both "error", which told a script nothing.
    test(`--json: database_unavailable (${what})`, async () => {
      for (const cmd of [['accounts', 'list'], ['migrate']]) {
        const r = await cli([...cmd, '--json', '--config', config, '--db', db])
        expect(r.code, cmd.join(' ')).toBe(1)
        expect(r.stdout).toBe('')
        const { error } = JSON.parse(r.stderr)
        expect([error.type, error.code, error.param]).toEqual([
          'database_unavailable',
          'database_unavailable',
          null,
        ])
        expect(error.message).toContain(named(db))
        expect(error.message).not.toContain(PASSWORD)
      }
    })

    test(`serve --db (${what}) exits 1 saying so`, async () => {
      const r = await cliProcess(['serve', '--port', '0', '--config', config, '--db', db], {
        timeoutMs: 10_000,
      })
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(named(db))
      expect(r.stderr).toMatch(says)
      expect(r.stderr).not.toContain(PASSWORD)
    }, 20_000)
  }
})

describe.skipIf(skipWithout(['postgres'], 'PostgreSQL login and database errors'))(
  'a PostgreSQL server that answers but refuses',
  () => {
    test('a database that does not exist, and a user that does not, say which and what to do', async () => {
      const pg = await sharedPostgres()
      try {
        const url = new URL(await pg.createDatabase())
        url.pathname = '/nosuchdb'
        url.password = PASSWORD
        const missing = await cli(['accounts', 'list', '--config', config, '--db', url.toString()])
        expect(missing.code).toBe(1)
        expect(missing.stderr).toContain('has no database nosuchdb')
        expect(missing.stderr).toContain('createdb nosuchdb')
        expect(missing.stderr).not.toContain(PASSWORD)
        url.pathname = '/postgres'
        url.username = 'nobody'
        const login = await cli(['migrate', '--config', config, '--db', url.toString()])
        expect(login.code).toBe(1)
        expect(login.stderr).toContain('refused the login')
        expect(login.stderr).toContain('check the user and password')
        expect(login.stderr).not.toContain(PASSWORD)
      } finally {
        await pg.release()
      }
    }, 60_000)
  },
)

describe('migrate', () => {
  test('on an older SQLite file reports the versions it brought it up by', async () => {
    const db = join(dir, 'older.db')
    const old = new Database(db, { create: true })
    migrate(old, Date.now(), LATEST_VERSION - 1)
    old.close()
    const r = await cli(['migrate', '--json', '--config', config, '--db', db])
    expect(r.code).toBe(0)
    expect(r.json().applied).toEqual([LATEST_VERSION])
  })

  test('on a new SQLite file reports the versions it applied; again, nothing to do', async () => {
    const db = join(dir, 'fresh', 'new.db')
    const first = await cli(['migrate', '--json', '--config', config, '--db', db])
    expect(first.code).toBe(0)
    const applied = first.json().applied as number[]
    expect(applied.length).toBeGreaterThan(1)
    expect(applied.at(-1)).toBe(LATEST_VERSION)
    expect(first.json()).toMatchObject({ engine: 'sqlite', version: LATEST_VERSION })
    const text = await cli(['migrate', '--config', config, '--db', join(dir, 'fresh', 'other.db')])
    expect(text.stdout).toContain(
      `migrated ${join(dir, 'fresh', 'other.db')} to schema version ${LATEST_VERSION}`,
    )
    const again = await cli(['migrate', '--json', '--config', config, '--db', db])
    expect(again.json().applied).toEqual([])
    expect((await cli(['migrate', '--config', config, '--db', db])).stdout).toContain('nothing to do')
  })
})

describe('--config DIR', () => {
  test('is reported as a directory, not as a file not found', async () => {
    const list = await cli(['accounts', 'list', '--config', dir])
    expect(list.code).toBe(1)
    expect(list.stderr).toContain('is a directory')
    expect(list.stderr).toContain(join(dir, 'switchyard.yaml'))
    expect(list.stderr).not.toContain('not found')
    const check = await cli(['config', 'check', '--json', '--config', dir])
    expect(check.code).toBe(1)
    expect(check.json().problems[0].message).toContain('is a directory')
    const env = await cli(['models'], { SWITCHYARD_CONFIG: dir })
    expect(env.stderr).toContain('is a directory')
  })
})
