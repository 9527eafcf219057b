/**
 * @module
 * The command line's database error, apart from the code that opens the database, so that
 * `main.ts` can tell it from other failures without loading the stores.
 */

/** The database named by the config (after `--db` / `SWITCHYARD_DB`) cannot be opened. */
export class DatabaseOpenError extends Error {
  override name = 'DatabaseOpenError'
}
