/**
 * Values the command line took as given: `--expires-at 2030-02-31` became 2030-03-03 (Date.parse
 * rolls an impossible day over), and `keys create --name` took 100,000 characters and terminal
 * escapes, which `keys list` then printed raw. The admin API caps a key name at 200 characters.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { AccountService } from '../../src/accounts/service.ts'
import { loadConfigFile } from '../../src/config/index.ts'
import { openStores } from '../../src/store/index.ts'
import { systemClock } from '../../src/util/clock.ts'
import { cli } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { writeConfig } from '../support/process.ts'

const dir = tempDir()
const config = writeConfig(dir, testConfigDoc())
const db = join(dir, 'cli.db')
const base = ['--config', config, '--db', db]
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('--expires-at is a real calendar time', () => {
  test.each(['2030-02-31', '2030-02-31T00:00:00Z', '2030-04-31', '2029-02-29T12:00:00Z', '2030-00-10'])(
    'an impossible date (%s) is refused, not rolled over',
    async (at) => {
      const r = await cli(['accounts', 'create', 'fay', '--plan', 'pro', '--expires-at', at, ...base])
      expect(r.code).toBe(2)
      expect(r.stderr).toContain(`--expires-at`)
      expect(r.stderr).toContain(at)
      expect((await cli(['accounts', 'show', 'fay', ...base])).code).not.toBe(0)
    },
  )

  test('a leap day, a date alone and an offset are taken as written', async () => {
    const leap = await cli([
      'accounts',
      'create',
      'fay',
      '--plan',
      'pro',
      '--expires-at',
      '2028-02-29',
      '--json',
      ...base,
    ])
    expect(leap.code).toBe(0)
    expect(leap.json().plan_expires_at).toBe('2028-02-29T00:00:00.000Z')
    const off = await cli([
      'accounts',
      'set-plan',
      'fay',
      'pro',
      '--expires-at',
      '2030-12-31T23:30:00-01:00',
      '--json',
      ...base,
    ])
    expect(off.json().plan_expires_at).toBe('2031-01-01T00:30:00.000Z')
  })
})

describe('keys create --name', () => {
  test('a name over 200 characters is refused, as the admin API refuses it; 200 is fine', async () => {
    expect((await cli(['accounts', 'create', 'acme', ...base])).code).toBe(0)
    const long = await cli(['keys', 'create', 'acme', '--name', 'x'.repeat(100_000), ...base])
    expect(long.code).toBe(2)
    expect(long.stderr).toContain('--name')
    expect(long.stderr).toContain('200')
    expect(long.stderr.length).toBeLessThan(1_000)
    const ok = await cli(['keys', 'create', 'acme', '--name', 'y'.repeat(200), '--json', ...base])
    expect(ok.code).toBe(0)
    expect(ok.json().name).toBe('y'.repeat(200))
  })

  test('a name with control characters (a terminal escape, a newline) is refused', async () => {
    for (const name of ['red\x1b[31malert', 'two\nlines', 'bell\x07', 'c1\u009b2J']) {
      const r = await cli(['keys', 'create', 'acme', '--name', name, ...base])
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('control characters')
      expect(r.stderr).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/)
    }
  })

  test('keys list never prints a control character raw, whoever wrote the name', async () => {
    // A name stored before the admin API refused control characters: make such a key below both.
    const loaded = await loadConfigFile(config)
    loaded.database.path = db
    const store = await openStores(loaded)
    try {
      await new AccountService(store, loaded, systemClock).createKey(
        'acme',
        'evil\x1b[2J\x1b[31mname\nFAKE ROW\u009b',
      )
    } finally {
      await store.close()
    }
    const list = await cli(['keys', 'list', 'acme', ...base])
    expect(list.code).toBe(0)
    expect(list.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/)
    expect(list.stdout).toContain('evil\\x1b[2J\\x1b[31mname\\nFAKE ROW\\x9b')
    // One header and one line per key: the newline did not start a row of its own.
    expect(list.stdout.trimEnd().split('\n')).toHaveLength(1 + 2)
    // --json is JSON: the name as stored.
    const json = (await cli(['keys', 'list', 'acme', '--json', ...base])).json()
    expect(json.map((k: { name: string }) => k.name)).toContain('evil\x1b[2J\x1b[31mname\nFAKE ROW\u009b')
  })
})
