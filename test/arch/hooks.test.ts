/**
 * Test files take `beforeEach` and `afterEach` from test/support/hooks.ts, never from `bun:test`:
 * Bun's own give those hooks 5 s whatever the preload sets, and a browser launch or a gateway
 * stop on a loaded machine takes longer (a CI run failed so, 2026-11-27).
 */
import { expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { tempDir } from '../support/config-doc.ts'
import { tsFiles } from '../support/ts-files.ts'

const TESTS = resolve(import.meta.dir, '..')
const OWN = resolve(TESTS, 'support/hooks.ts')
const FROM_BUN_TEST = /import\s*\{([^}]*)\}\s*from\s*['"]bun:test['"]/g

/** The files that import `beforeEach` or `afterEach` from `bun:test` itself. */
export function bunEachHooks(files: string[]): string[] {
  return files.filter((file) =>
    [...readFileSync(file, 'utf8').matchAll(FROM_BUN_TEST)].some((m) =>
      m[1]!.split(',').some((name) => /^\s*(beforeEach|afterEach)\b/.test(name)),
    ),
  )
}

test("no test file takes beforeEach or afterEach from bun:test (Bun's 5 s for those hooks)", () => {
  const files = tsFiles(TESTS).filter((f) => f !== OWN)
  expect(files.length).toBeGreaterThan(50)
  expect(bunEachHooks(files).map((f) => relative(TESTS, f))).toEqual([])
})

test("the check finds such an import, alone or among others, and passes the support module's", () => {
  const dir = tempDir('switchyard-hooks-')
  const bad = join(dir, 'bad.ts')
  const good = join(dir, 'good.ts')
  writeFileSync(bad, "import { afterAll,\n  afterEach, expect } from 'bun:test'\n")
  writeFileSync(good, "import { afterAll, expect } from 'bun:test'\nimport { afterEach } from './hooks.ts'\n")
  expect(bunEachHooks([bad, good])).toEqual([bad])
})
