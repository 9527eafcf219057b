/**
 * @module
 * The serve file: where a running `serve` listens and the credential `switchyard reload` proves
 * itself with — the running gateway's own, never what the file on disk says now (a reload that
 * changes `admin.token` or `server.port` is asked of the gateway that still has the old ones;
 * docs/decisions.md, "`switchyard reload` reaches the running gateway through a serve file").
 *
 * The process the operator started (the primary) writes it once it listens, beside the SQLite
 * database (`<database.path>.<pid>.serving`: the folder the gateway may write); with PostgreSQL
 * (no `database.path` then) or `:memory:`, beside the config file. Where that folder cannot be
 * written (the documented unit's read-only /etc), in a runtime folder of this user's —
 * `$XDG_RUNTIME_DIR/switchyard`, else `<temp dir>/switchyard-<uid>`, 0700, never a link nor a
 * folder another user owns — named from a hash of the base's absolute path (`servePlaces`); `reload`
 * searches every such place. Mode 0600, created new (never through a file or link already there),
 * written whole then renamed in; it removes it on exit. A `kill -9` leaves it: a file whose pid no
 * longer runs is removed by the next `serve` or `reload` (`pruneServeFiles`). One file a gateway:
 * several `serve` processes on one database (DESIGN: several sharing SQLite) each write their own,
 * and `reload` asks every one. The credential is a random one per start,
 * good for `POST /admin/v1/reload` only (not the admin API's other routes): it is never logged,
 * printed or passed on the command line; `--workers N` workers read it from the file, each
 * checking that it is their primary's.
 */
import { createHash, randomBytes } from 'node:crypto'
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
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

/** A folder a serve file may be in, and its name there less `.<pid>.serving`. */
export interface ServePlace {
  dir: string
  name: string
  /** A per-user runtime folder of ours (checked before use), not the folder beside the base. */
  runtime: boolean
}

/** Where the serve files of the gateways that run `config` (read from `configFile`) are named from. */
function serveFileBase(config: Config, configFile: string): string {
  const db = config.database.url === null && config.database.path !== ':memory:' ? config.database.path : null
  return resolve(db ?? configFile)
}

/**
 * Every place a serve file of `config`'s gateways may be, in the order `serve` tries them: beside
 * the base (the SQLite database, or the config file); then, for a folder it cannot write, this
 * user's runtime folders — `$XDG_RUNTIME_DIR/switchyard` (when set) and `<temp dir>/switchyard-<uid>`
 * — where the file is named from a hash of the base's absolute path (one folder holds every
 * config's). `reload` and a worker search them all, so they find the file wherever `serve` put it.
 */
export function servePlaces(
  config: Config,
  configFile: string,
  env: Record<string, string | undefined>,
): ServePlace[] {
  const base = serveFileBase(config, configFile)
  let real = base
  try {
    real = realpathSync(base)
  } catch {}
  const name = `${basename(base)}-${createHash('sha256').update(real).digest('hex').slice(0, 16)}`
  const uid = process.getuid?.()
  const folder = uid === undefined ? 'switchyard' : `switchyard-${uid}`
  const xdg = env.XDG_RUNTIME_DIR
  return [
    { dir: dirname(base), name: basename(base), runtime: false },
    ...(xdg?.startsWith('/') ? [{ dir: join(xdg, 'switchyard'), name, runtime: true }] : []),
    { dir: join(env.TMPDIR || tmpdir(), folder), name, runtime: true },
  ]
}

/** The serve file of the gateway process `pid` in `place`. */
export const servePath = (place: ServePlace, pid: number): string =>
  join(place.dir, `${place.name}.${pid}.serving`)

/**
 * Why `dir` is not a runtime folder of ours, or null when it is: a folder (not a link) this user
 * owns, closed to every other (0700) — no one else can put a serve file in it, nor read ours —
 * in a folder that is ours too (`$XDG_RUNTIME_DIR`), or root's and sticky (the temp dir) or shut
 * to group and others: one where another user could rename ours away and put theirs in its place
 * — any folder another user owns, whatever its mode — is not used. `create`: made (0700) when
 * missing.
 */
function notOurs(dir: string, create: boolean): string | null {
  const uid = process.getuid?.()
  try {
    const parent = statSync(dirname(dir))
    const shut = parent.mode & 0o1000 || !(parent.mode & 0o022)
    if (uid !== undefined && parent.uid !== uid && !(parent.uid === 0 && shut))
      return parent.uid === 0
        ? `${dirname(dir)} is root's and others may rename what is in it (not sticky)`
        : `${dirname(dir)} is another user's (uid ${parent.uid}): its owner may rename what is in it`
  } catch (err) {
    return (err as Error).message
  }
  if (create) {
    try {
      mkdirSync(dir, { mode: 0o700 })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return (err as Error).message
    }
  }
  let st: ReturnType<typeof lstatSync>
  try {
    st = lstatSync(dir)
  } catch (err) {
    return (err as Error).message
  }
  if (st.isSymbolicLink()) return `${dir} is a link: never followed`
  if (!st.isDirectory()) return `${dir} is not a folder`
  if (uid !== undefined && st.uid !== uid) return `${dir} belongs to another user (uid ${st.uid})`
  if (st.mode & 0o077)
    return `${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)}): chmod 700 it`
  return null
}

/**
 * Writes the serve file in the first of `places` that takes it: beside the base, else a runtime
 * folder of ours. Returns where, its removal, and why each place before it did not take it; throws
 * (every place's reason) when none does.
 */
export function publishServeFile(
  places: ServePlace[],
  file: ServeFile,
): { path: string; remove: () => void; passed: string[] } {
  const passed: string[] = []
  for (const place of places) {
    const path = servePath(place, file.pid)
    const why = place.runtime ? notOurs(place.dir, true) : null
    if (why !== null) {
      passed.push(why)
      continue
    }
    try {
      return { path, remove: writeServeFile(path, file), passed }
    } catch (err) {
      passed.push(`${path}: ${(err as Error).message}`)
    }
  }
  throw new Error(passed.join('; '))
}

/** The serve file of the primary `pid` (a worker's), wherever it put it; null when none. */
export function findServeFile(places: ServePlace[], pid: number): ServeFile | null {
  for (const place of places) {
    if (place.runtime && notOurs(place.dir, false) !== null) continue
    const file = readServeFile(servePath(place, pid))
    if (file?.pid === pid) return file
  }
  return null
}

/**
 * Every serve file there is for `config`'s gateways (one a `serve` started on its database), by
 * pid, in every place one may be (a runtime folder only when it is ours), less those whose pid no
 * longer runs (a `kill -9`'s): those are removed, their paths in `removed` — asked, a gateway
 * restarted on the same port would take the dead one's credential for a failed admin login.
 */
export function pruneServeFiles(places: ServePlace[]): {
  found: Array<{ path: string; file: ServeFile }>
  removed: string[]
} {
  const found: Array<{ path: string; file: ServeFile }> = []
  const removed: string[] = []
  for (const place of places) {
    if (place.runtime && notOurs(place.dir, false) !== null) continue
    for (const f of serveFiles(place)) {
      if (running(f.file.pid)) {
        found.push(f)
        continue
      }
      try {
        unlinkSync(f.path)
        removed.push(f.path)
      } catch {}
    }
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

function serveFiles(place: ServePlace): Array<{ path: string; file: ServeFile }> {
  const name = `${place.name}.`
  let names: string[]
  try {
    names = readdirSync(place.dir)
  } catch {
    return []
  }
  const found: Array<{ path: string; file: ServeFile }> = []
  for (const n of names.sort()) {
    const pid = n.startsWith(name) ? /^(\d+)\.serving$/.exec(n.slice(name.length))?.[1] : undefined
    if (pid === undefined) continue
    const path = join(place.dir, n)
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
