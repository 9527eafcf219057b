/** @module Storage: the interface and its backends. */

export { describeDatabase, openStores } from './open.ts'
export { openSqliteStore, SqliteStore } from './sqlite/index.ts'
export * from './types.ts'
