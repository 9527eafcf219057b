/**
 * The serve file's place and its write: beside the SQLite database (beside the config file with
 * PostgreSQL, whose config has no `database.path`), and created new, never written through a file
 * or link put in its way.
 */
import { afterAll, expect, test } from 'bun:test'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { readServeFile, serveFilePath, writeServeFile } from '../../src/cli/serve-file.ts'
import type { Config } from '../../src/config/index.ts'
import { tempDir } from '../support/config-doc.ts'

const dir = tempDir()
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const config = (database: { path: string; url: string | null }) => ({ database }) as unknown as Config

test('beside the SQLite database; beside the config file with PostgreSQL (no database.path) and :memory:', () => {
  const sqlite = config({ path: '/var/lib/switchyard/switchyard.db', url: null })
  expect(serveFilePath(sqlite, '/etc/switchyard/switchyard.yaml', 42)).toBe(
    '/var/lib/switchyard/switchyard.db.42.serving',
  )
  const pg = config({ path: './data/switchyard.db', url: 'postgres://db.internal/switchyard' })
  expect(serveFilePath(pg, '/srv/sw/switchyard.yaml', 42)).toBe('/srv/sw/switchyard.yaml.42.serving')
  const memory = config({ path: ':memory:', url: null })
  expect(serveFilePath(memory, '/srv/sw/switchyard.yaml', 7)).toBe('/srv/sw/switchyard.yaml.7.serving')
})

test("a link planted at the temporary name is not written through: the credential stays in the serve file's own 0600 file", () => {
  const path = join(dir, 'data', 'switchyard.db.4242.serving')
  const bait = join(dir, 'bait')
  writeFileSync(bait, '')
  // Planted where the temporary file would go.
  mkdirSync(join(dir, 'data'))
  symlinkSync(bait, `${path}.${process.pid}.tmp`)
  writeServeFile(path, { pid: 4242, url: 'http://127.0.0.1:9', token: 'secret-token' })
  expect(readFileSync(bait, 'utf8')).toBe('')
  expect(lstatSync(path).isSymbolicLink()).toBe(false)
  expect(statSync(path).mode & 0o777).toBe(0o600)
  expect(readServeFile(path)?.token).toBe('secret-token')
  expect(existsSync(`${path}.${process.pid}.tmp`)).toBe(false)
})
