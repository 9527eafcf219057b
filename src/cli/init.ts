/**
 * @module
 * `switchyard init [--config FILE] [--db PATH|URL]`: writes the commented starter config (the same
 * file as `switchyard.example.yaml`, embedded in the binary) where the other commands will look
 * for it: `--config` (or its older name `--path`), else `SWITCHYARD_CONFIG`, else
 * ./switchyard.yaml. `--db` is written into it as the database. Never overwrites; the new file is
 * mode 0600 (owner only), since it may hold a database password and the admin token.
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import starter from '../../switchyard.example.yaml' with { type: 'text' }
import { flagString, type Parsed, UsageError } from './args.ts'
import { checkCommand, configPath, isPostgresUrl, Output } from './context.ts'
import { CliError } from './errors.ts'
import type { Io } from './io.ts'

export const STARTER_CONFIG: string = starter

/** The starter's database line, which `--db` replaces. */
const DATABASE_LINE = /^ {2}path: \.\/data\/switchyard\.db .*$/m

export async function initCommand(p: Parsed, io: Io): Promise<number> {
  checkCommand(p, { usage: 'init [--config FILE] [--db PATH|URL]', words: 1, flags: ['path'] })
  const path = resolve(targetPath(p, io))
  const db = flagString(p, 'db')
  const text = db === undefined ? STARTER_CONFIG : withDatabase(STARTER_CONFIG, db)
  if (existsSync(path)) {
    throw new CliError(
      'file_exists',
      `${path} already exists; init never overwrites. Pass --config FILE to write elsewhere.`,
    )
  }
  write(path, text)
  // On PostgreSQL the schema is applied by `migrate` first (serve refuses an unknown one).
  const steps = [
    ...(db !== undefined && isPostgresUrl(db) ? [`switchyard migrate --config ${path}`] : []),
    `switchyard accounts create alice --plan free --config ${path}`,
    `switchyard keys create alice --config ${path}`,
    `switchyard serve --config ${path}`,
  ]
  new Output(p, io).result({ path }, () => `wrote ${path}\nnext: ${steps.join('\n      ')}`)
  return 0
}

/** Writes the new file (owner-only), its folders too; a failure names the file and what to do. */
function write(path: string, text: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true })
    // 0600: the file may hold a database password, and operators add the admin token to it.
    writeFileSync(path, text, { flag: 'wx', mode: 0o600 })
  } catch (err) {
    const file = fileOnTheWay(dirname(path))
    const why = file ? `${file} is a file, not a folder` : (err as Error).message
    throw new CliError(
      'write_failed',
      `cannot write ${path}: ${why}; pass --config FILE with a path in a folder this user may write to`,
    )
  }
}

/** The nearest existing ancestor of `dir` if it is not a folder (`mkdir` says EEXIST or ENOTDIR). */
function fileOnTheWay(dir: string): string | null {
  for (let d = dir; ; d = dirname(d)) {
    let st: ReturnType<typeof statSync>
    try {
      st = statSync(d, { throwIfNoEntry: false })
    } catch {
      continue // ENOTDIR: a file is further up
    }
    if (st) return st.isDirectory() ? null : d
    if (dirname(d) === d) return null
  }
}

/** `--path` is `--config` by its older name: both may be given only if they name one file. */
function targetPath(p: Parsed, io: Io): string {
  const path = flagString(p, 'path')
  const config = flagString(p, 'config')
  if (path !== undefined && config !== undefined && resolve(path) !== resolve(config)) {
    throw new UsageError(`--path ${path} and --config ${config} name different files; give one of them`)
  }
  return path ?? configPath(p, io)
}

/**
 * The starter with `db` as its database: a postgres:// URL as `database.url`, else a SQLite path
 * made absolute from here, so it names the file `--db` names for every other command (a relative
 * `database.path` would be read from the config file's folder instead).
 */
function withDatabase(text: string, db: string): string {
  if (!DATABASE_LINE.test(text))
    throw new CliError('internal_error', 'the starter config has no database path line to replace')
  const line = isPostgresUrl(db)
    ? `  url: ${JSON.stringify(db)}`
    : `  path: ${JSON.stringify(db === ':memory:' ? db : resolve(db))}`
  return text.replace(DATABASE_LINE, () => `${line} # from init --db; env SWITCHYARD_DB and --db override it`)
}
