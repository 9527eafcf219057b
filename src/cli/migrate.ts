/**
 * @module
 * `switchyard migrate`: applies the schema to the configured engine. SQLite migrates itself on
 * open, so here that open is all there is (and what it applied is read back); PostgreSQL is
 * migrated only here, once, so replicas of mixed versions never race to change a shared schema.
 */
import { Database } from 'bun:sqlite'
import { statSync } from 'node:fs'
import type { Config } from '../config/index.ts'
import { describeDatabase } from '../store/index.ts'
import { migratePostgresUrl, PG_LATEST_VERSION } from '../store/postgres/index.ts'
import { LATEST_VERSION } from '../store/sqlite/migrations.ts'
import type { Parsed } from './args.ts'
import { checkCommand, loadConfig, Output } from './context.ts'
import { explainFailure, openDatabase } from './database.ts'
import type { Io } from './io.ts'

export async function migrateCommand(p: Parsed, io: Io): Promise<number> {
  checkCommand(p, { usage: 'migrate', words: 1 })
  // A migration (often a deploy's job of its own) opens the database only: provider keys and the
  // admin token may be unset, as for the account commands.
  const config = await loadConfig(p, io, { secrets: false })
  const database = describeDatabase(config)
  let result: { engine: 'postgres' | 'sqlite'; database: string; version: number; applied: number[] }
  if (config.database.url) {
    const url = config.database.url
    const applied = await explainFailure(config, () => migratePostgresUrl(url, Date.now()))
    result = { engine: 'postgres', database, version: PG_LATEST_VERSION, applied }
  } else {
    result = { engine: 'sqlite', database, version: LATEST_VERSION, applied: await migrateSqlite(config) }
  }
  new Output(p, io).result(result, () =>
    result.applied.length
      ? `migrated ${database} to schema version ${result.version} (applied ${result.applied.join(', ')})`
      : `${database} is at schema version ${result.version}; nothing to do`,
  )
  return 0
}

/** Opens (so migrates) the SQLite database; returns the versions that open applied. */
async function migrateSqlite(config: Config): Promise<number[]> {
  const path = config.database.path
  const before = await explainFailure(config, async () => schemaVersions(path))
  await (await openDatabase(config)).close()
  const after = schemaVersions(path)
  return after.filter((v) => !before.includes(v))
}

/** The versions recorded in a SQLite file, read without writing: none for a new or empty file. */
function schemaVersions(path: string): number[] {
  const st = path === ':memory:' ? undefined : statSync(path, { throwIfNoEntry: false })
  if (!st?.isFile() || st.size === 0) return []
  const db = new Database(path, { readonly: true })
  try {
    const table = db
      .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      .get()
    if (!table) return []
    return db
      .query<{ version: number }, []>('SELECT version FROM schema_migrations ORDER BY version')
      .all()
      .map((r) => r.version)
  } finally {
    db.close()
  }
}
