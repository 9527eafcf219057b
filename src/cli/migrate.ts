/**
 * @module
 * `switchyard migrate`: applies the schema to the configured engine. SQLite migrates itself on
 * open, so this only reports its version there; PostgreSQL is migrated only here, once, so
 * replicas of mixed versions never race to change a shared schema.
 */

import { describeDatabase } from '../store/index.ts'
import { migratePostgresUrl, PG_LATEST_VERSION } from '../store/postgres/index.ts'
import { LATEST_VERSION } from '../store/sqlite/migrations.ts'
import { checkFlags, type Parsed } from './args.ts'
import { GLOBAL_FLAGS, type Io, loadConfig, Output } from './context.ts'
import { explainFailure, openDatabase } from './database.ts'

export async function migrateCommand(p: Parsed, io: Io): Promise<number> {
  checkFlags(p, GLOBAL_FLAGS)
  const config = await loadConfig(p, io)
  const database = describeDatabase(config)
  let result: { engine: 'postgres' | 'sqlite'; database: string; version: number; applied: number[] }
  if (config.database.url) {
    const url = config.database.url
    const applied = await explainFailure(config, () => migratePostgresUrl(url, Date.now()))
    result = { engine: 'postgres', database, version: PG_LATEST_VERSION, applied }
  } else {
    await (await openDatabase(config)).close()
    result = { engine: 'sqlite', database, version: LATEST_VERSION, applied: [] }
  }
  new Output(io, p.flags.json === true).result(result, () =>
    result.applied.length
      ? `migrated ${database} to schema version ${result.version} (applied ${result.applied.join(', ')})`
      : `${database} is at schema version ${result.version}; nothing to do`,
  )
  return 0
}
