/**
 * Where the config and the database are, said when they are wrong: `--config DIR` was "file
 * not found".
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { cli } from '../support/cli.ts'
import { tempDir } from '../support/config-doc.ts'

const dir = tempDir()
afterAll(() => rmSync(dir, { recursive: true, force: true }))

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
