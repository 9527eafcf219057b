/**
 * @module
 * The serve file: where a running `serve` listens and the credential `switchyard reload` proves
 * itself with — the running gateway's own, never what the file on disk says now (a reload that
 * changes `admin.token` or `server.port` is asked of the gateway that still has the old ones;
 * docs/decisions.md, "`switchyard reload` reaches the running gateway through a serve file").
 *
 * The process the operator started (the primary) writes it once it listens, beside the SQLite
 * database (`<database.path>.<pid>.serving`: the folder the gateway may write); with PostgreSQL
 * (no `database.path` then) or `:memory:`, beside the config file — under the documented unit's
 * read-only /etc it cannot be, and `systemctl reload` (SIGHUP) is the way; mode 0600, created new (never through a file or link already there),
 * written whole then renamed in; it removes it on exit. A `kill -9` leaves it: a file whose pid no
 * longer runs is removed by the next `serve` or `reload` (`pruneServeFiles`). One file a gateway:
 * several `serve` processes on one database (DESIGN: several sharing SQLite) each write their own,
 * and `reload` asks every one. The credential is a random one per start,
 * good for `POST /admin/v1/reload` only (not the admin API's other routes): it is never logged,
 * printed or passed on the command line; `--workers N` workers read it from the file, each
 * checking that it is their primary's.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import type { Config } from '../config/index.ts'

export interface ServeFile {
  /** The primary's pid. */
  pid: number
  /** Where the gateway is reached on this machine (a wildcard listen address as loopback). */
  url: string
  /** The reload credential (`Authorization: Bearer`). */
  token: string
}

/** Where the serve files of the gateways that run `config` (read from `configFile`) go, less `.<pid>.serving`. */
export function serveFileBase(config: Config, configFile: string): string {
  const db = config.database.url === null && config.database.path !== ':memory:' ? config.database.path : null
  return resolve(db ?? configFile)
}

/** The serve file of the gateway process `pid` that runs `config` (read from `configFile`). */
export function serveFilePath(config: Config, configFile: string, pid: number): string {
  return `${serveFileBase(config, configFile)}.${pid}.serving`
}

/**
 * Every serve file there is for `config`'s gateways (one a `serve` started on its database), by
 * pid, less those whose pid no longer runs (a `kill -9`'s): those are removed, their paths in
 * `removed` — asked, a gateway restarted on the same port would take the dead one's credential
 * for a failed admin login.
 */
export function pruneServeFiles(
  config: Config,
  configFile: string,
): { found: Array<{ path: string; file: ServeFile }>; removed: string[] } {
  const found: Array<{ path: string; file: ServeFile }> = []
  const removed: string[] = []
  for (const f of serveFiles(serveFileBase(config, configFile))) {
    if (running(f.file.pid)) {
      found.push(f)
      continue
    }
    try {
      unlinkSync(f.path)
      removed.push(f.path)
    } catch {}
  }
  return { found, removed }
}

/** Whether a process `pid` runs on this machine (EPERM: it does, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function serveFiles(base: string): Array<{ path: string; file: ServeFile }> {
  const name = `${basename(base)}.`
  let names: string[]
  try {
    names = readdirSync(dirname(base))
  } catch {
    return []
  }
  const found: Array<{ path: string; file: ServeFile }> = []
  for (const n of names.sort()) {
    const pid = n.startsWith(name) ? /^(\d+)\.serving$/.exec(n.slice(name.length))?.[1] : undefined
    if (pid === undefined) continue
    const path = join(dirname(base), n)
    const file = readServeFile(path)
    if (file !== null && file.pid === Number(pid)) found.push({ path, file })
  }
  return found
}

/** A fresh reload credential: 256 random bits. */
export const newServeToken = (): string => randomBytes(32).toString('base64url')

/** Writes the file (mode 0600, whole: a reader never sees half of it); returns its removal. */
export function writeServeFile(path: string, file: ServeFile): () => void {
  const tmp = `${path}.${process.pid}.tmp`
  mkdirSync(dirname(path), { recursive: true })
  // Created new (`wx`): a file or link someone put there first is removed, never written through.
  const write = () => writeFileSync(tmp, `${JSON.stringify(file)}\n`, { mode: 0o600, flag: 'wx' })
  try {
    write()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    unlinkSync(tmp)
    write()
  }
  renameSync(tmp, path)
  // The path has this process's pid: no other gateway writes it while this one runs.
  return () => {
    try {
      unlinkSync(path)
    } catch {}
  }
}

/** The file as written, or null when there is none (or it is not one of ours). */
export function readServeFile(path: string): ServeFile | null {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return null
  }
  try {
    const f = JSON.parse(text) as Partial<ServeFile>
    if (typeof f.pid !== 'number' || typeof f.url !== 'string' || typeof f.token !== 'string') return null
    return { pid: f.pid, url: f.url, token: f.token }
  } catch {
    return null
  }
}

/** A wildcard listen address is reached on this machine's loopback. */
export function reachable(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1'
  if (host === '::' || host === '[::]') return '[::1]'
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
}
