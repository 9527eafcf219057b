/**
 * Every SQL statement takes its values as bound parameters. SQLite statements are prepared
 * strings whose only interpolations are constant SQL fragments (UPPER_CASE names); PostgreSQL
 * statements are Bun.SQL tagged templates, which bind every `${}` by construction, and raw text
 * (`unsafe`) is used only for the migrations' constant DDL.
 */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO } from '../support/cli.ts'
import { tsFiles } from '../support/ts-files.ts'

const STORE = join(REPO, 'src/store')
const CALL = /\.(query|run|prepare|exec|unsafe)(?:<[\s\S]*?>)?\(\s*`((?:\\`|[^`])*)`/g

test('SQL text passed to the drivers interpolates only constant fragments, never values', () => {
  const offenders: string[] = []
  let statements = 0
  for (const file of tsFiles(STORE)) {
    const src = readFileSync(file, 'utf8')
    for (const m of src.matchAll(CALL)) {
      statements++
      const text = m[2]!
      for (const [, expr] of text.matchAll(/\$\{([^}]*)\}/g)) {
        // PRAGMA takes no parameters; its one value is an integer from the validated config.
        if (/^\s*PRAGMA busy_timeout/.test(text) && expr === 'waitMs') continue
        if (!/^[A-Z][A-Z0-9_]*$/.test(expr!)) offenders.push(`${file}: \${${expr}} in ${text.slice(0, 60)}`)
      }
    }
  }
  expect(statements).toBeGreaterThan(10)
  expect(offenders).toEqual([])
})

test('PostgreSQL runs raw text only for the migrations, whose SQL is a constant', () => {
  const raw: string[] = []
  for (const file of tsFiles(STORE)) {
    for (const m of readFileSync(file, 'utf8').matchAll(/\.unsafe\(([^)]*)\)/g)) raw.push(`${file}:${m[1]}`)
  }
  expect(raw).toEqual([`${join(STORE, 'postgres/migrations.ts')}:m.sql`])
})
