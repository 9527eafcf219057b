/**
 * @module
 * The database as the command line opens it (`serve`, `migrate`, and every command that reads
 * accounts). The engines' own words ("unable to open database file", "file is not a database",
 * "Failed to connect") name neither the database nor a fix: a failure to open is reported with
 * the database (a URL without its password) and what to check.
 */
import { statSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../config/index.ts'
import { describeDatabase, openStores, type Store } from '../store/index.ts'
import { pgUnavailable } from '../store/postgres/errors.ts'
import { DatabaseOpenError } from './errors.ts'

export function openDatabase(config: Config, opts?: Parameters<typeof openStores>[1]): Promise<Store> {
  return explainFailure(config, () => openStores(config, opts))
}

/** Runs `open` (anything that opens or migrates the configured database), explaining a failure. */
export async function explainFailure<T>(config: Config, open: () => Promise<T>): Promise<T> {
  try {
    return await open()
  } catch (err) {
    // A module the store loads when the config names it (store/open.ts) that cannot be found is
    // the build's fault, not the database's: passed on as it is.
    if ((err as { code?: unknown })?.code === 'ERR_MODULE_NOT_FOUND') throw err
    throw new DatabaseOpenError(explain(config, err))
  }
}

const WHICH = '--db, SWITCHYARD_DB or database'

function explain(config: Config, err: unknown): string {
  const e = err as { code?: unknown; errno?: unknown; message?: unknown }
  const detail = withoutPassword(config, String(e?.message ?? err))
  const where = describeDatabase(config)
  const url = config.database.url
  if (url) {
    const sqlState = String(e?.errno ?? '')
    const at = hostAndPort(url)
    if (pgUnavailable(err)) {
      return `cannot reach the PostgreSQL database ${where} (${detail}): check that PostgreSQL is running and accepts connections at ${at}, and that ${WHICH}.url names the right host and port`
    }
    if (sqlState.startsWith('28')) {
      return `PostgreSQL at ${at} refused the login for ${where} (${detail}): check the user and password in ${WHICH}.url`
    }
    if (sqlState === '3D000') {
      return `the PostgreSQL server at ${at} has no database ${databaseName(url)} (${detail}): create it (createdb ${databaseName(url)}), then run switchyard migrate`
    }
    return detail.includes(where) ? detail : `database ${where}: ${detail}`
  }
  return `cannot open the database ${where}: ${sqliteReason(config.database.path, String(e?.code ?? ''), detail)}`
}

function sqliteReason(path: string, code: string, detail: string): string {
  const fix = `point ${WHICH}.path at a SQLite file (it is created if missing)`
  const st = path === ':memory:' ? undefined : statSync(path, { throwIfNoEntry: false })
  if (st?.isDirectory()) return `it is a directory; ${fix}, e.g. ${join(path, 'switchyard.db')}`
  if (st && !st.isFile()) return `it is not a regular file (a device, pipe or socket); ${fix}`
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return `it is not a SQLite database, or it is damaged (${detail}); point ${WHICH}.path at a Switchyard database, or at a new file to start empty, and restore this one from a backup if it held your data`
  }
  if (
    /^SQLITE_(CANTOPEN|PERM|READONLY|AUTH)/.test(code) ||
    /^(EACCES|EPERM|ENOENT|ENOTDIR|EROFS|ELOOP|ENAMETOOLONG)$/.test(code)
  ) {
    return `${detail}; check that its folder exists (or can be created) and that this user may read and write the folder and the file`
  }
  if (code.startsWith('SQLITE_FULL') || code === 'ENOSPC')
    return `${detail}; the disk is full: free some space`
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') {
    return `${detail}; check the disk, and that the file is on a local filesystem SQLite can lock`
  }
  // Anything else (a schema newer than this build, a lock held too long) says what to do itself.
  return detail
}

function databaseName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1)) || 'switchyard'
  } catch {
    return 'switchyard'
  }
}

function hostAndPort(url: string): string {
  try {
    const u = new URL(url)
    return `${u.hostname || 'localhost'}:${u.port || '5432'}`
  } catch {
    return 'the host in the URL'
  }
}

/** An engine's message might quote the URL it was given: never print its password. */
function withoutPassword(config: Config, text: string): string {
  if (!config.database.url) return text
  let password = ''
  try {
    password = new URL(config.database.url).password
  } catch {
    return text
  }
  if (!password) return text
  let out = text.split(password).join('***')
  try {
    const decoded = decodeURIComponent(password)
    if (decoded) out = out.split(decoded).join('***')
  } catch {
    // a malformed escape: the raw form is already replaced
  }
  return out
}
