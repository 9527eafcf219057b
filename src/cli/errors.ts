/**
 * @module
 * The command line's own failures, each with the code `--json` prints (docs/command-line.md lists
 * them), apart from the code that throws them, so that `main.ts` can tell them from other failures
 * without loading the stores.
 */

/** A command's failure: `code` is the `--json` error line's `code` and `type`. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** The database named by the config (after `--db` / `SWITCHYARD_DB`) cannot be opened. */
export class DatabaseOpenError extends CliError {
  override name = 'DatabaseOpenError'

  constructor(message: string) {
    super('database_unavailable', message)
  }
}
