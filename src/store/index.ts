/** @module Storage: the interface and its backends. */

export * from './alert-types.ts'
export * from './errors.ts'
export { describeDatabase, openStores } from './open.ts'
export { openSqliteStore, type SqliteStore } from './sqlite/index.ts'
export * from './types.ts'
