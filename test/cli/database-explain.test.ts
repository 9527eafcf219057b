/**
 * How the command line explains a failure to open the database (src/cli/database.ts): the
 * engine's failure is explained with the database named; a module the store loads only when the
 * config names its engine (store/open.ts) that cannot be found is the build's fault, not the
 * database's, and passes as it is (the review of stop 62: a missing Redis module was reported as
 * "database postgres://…: Cannot find module").
 */
import { expect, test } from 'bun:test'
import { explainFailure } from '../../src/cli/database.ts'
import { DatabaseOpenError } from '../../src/cli/errors.ts'
import { parseConfig } from '../../src/config/index.ts'
import { testConfigDoc } from '../support/config-doc.ts'

const config = parseConfig({ ...testConfigDoc(), database: { url: 'postgres://sy:secret@127.0.0.1:1/sy' } })

test('a module that cannot be found passes as it is, not as a database failure', async () => {
  const missing = Object.assign(new Error("Cannot find module './redis/index.ts'"), {
    code: 'ERR_MODULE_NOT_FOUND',
  })
  const thrown = await explainFailure(config, () => Promise.reject(missing)).catch((e: unknown) => e)
  expect(thrown).toBe(missing)
})

test("the engine's own failure is explained, with the database named and no password", async () => {
  const thrown = await explainFailure(config, () => Promise.reject(new Error('boom'))).catch(
    (e: unknown) => e,
  )
  expect(thrown).toBeInstanceOf(DatabaseOpenError)
  expect(String((thrown as Error).message)).toContain('boom')
  expect(String((thrown as Error).message)).not.toContain('secret')
})
