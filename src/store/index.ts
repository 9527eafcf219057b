/** @module Storage: the interface and its backends. */

export { openSqliteStore, SqliteStore } from './sqlite/index.ts'
export * from './types.ts'
