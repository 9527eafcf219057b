/**
 * Throwaway PostgreSQL and Redis servers for tests: each in a temporary directory, on a free
 * 127.0.0.1 port, killed when the test file ends. A missing engine makes the tests that need it
 * skip, with a printed line that says which and why.
 */
import { spawnSync } from 'node:child_process'
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { tempDir } from './config-doc.ts'

const PG_ROOT = '/usr/lib/postgresql'

function pgBin(): string | null {
  if (!existsSync(PG_ROOT)) return null
  const versions = readdirSync(PG_ROOT)
    .filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a))
  return versions.length ? join(PG_ROOT, versions[0]!, 'bin') : null
}

function which(cmd: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' })
  return r.status === 0 ? r.stdout.trim() : null
}

/** initdb refuses to run as root: as root, run PostgreSQL as the unprivileged `postgres` user. */
export function pgUser(): { uid: number; gid: number; name: string } | null {
  if (process.getuid?.() !== 0) return null
  const r = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' })
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' })
  if (r.status !== 0 || g.status !== 0) return null
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()), name: 'postgres' }
}

export const engines = {
  postgres: ((): { ok: true; bin: string } | { ok: false; why: string } => {
    const bin = pgBin()
    if (!bin) return { ok: false, why: `no PostgreSQL under ${PG_ROOT} (apt-get install postgresql)` }
    if (process.getuid?.() === 0 && !pgUser())
      return { ok: false, why: 'running as root and there is no unprivileged `postgres` user to run it as' }
    if (process.getuid?.() === 0 && !which('runuser'))
      return { ok: false, why: 'running as root without runuser(1)' }
    return { ok: true, bin }
  })(),
  redis: ((): { ok: true; bin: string } | { ok: false; why: string } => {
    const bin = which('redis-server')
    return bin
      ? { ok: true, bin }
      : { ok: false, why: 'redis-server not found (apt-get install redis-server)' }
  })(),
}

/** Prints once per test file which of its tests are skipped and why; returns whether to skip. */
export function skipWithout(need: Array<'postgres' | 'redis'>, what: string): boolean {
  const missing = need.filter((n) => !engines[n].ok)
  for (const n of missing) {
    const e = engines[n]
    console.log(`SKIPPED ${what}: ${e.ok ? '' : e.why}`)
  }
  return missing.length > 0
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

export function run(argv: string[], asUser: string | null): void {
  const full = asUser ? ['runuser', '-u', asUser, '--', ...argv] : argv
  const r = spawnSync(full[0]!, full.slice(1), { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed: ${r.stderr || r.stdout}`)
}

export interface TestPostgres {
  port: number
  /** The server's processes (postmaster and its backends), for CPU accounting. */
  pids(): number[]
  /** A fresh, empty database on this server. */
  createDatabase(): Promise<string>
  stop(): Promise<void>
}

/** `durable`: fsync on, as in production (the benchmark); tests run without it. */
/** A running server's files and how to drive it: what stopping it (or a watchdog) needs. */
export interface PostgresFiles {
  port: number
  /** Removed when the server stops; holds `data/`, the socket and the log. */
  dir: string
  data: string
  /** pg_ctl's directory. */
  bin: string
  /** The user the server runs as (`postgres` when the tests run as root), or null for ours. */
  who: string | null
}

/** A tmpfs's `f_type` (statfs(2)). */
const TMPFS_MAGIC = 0x01021994
/**
 * The room a tmpfs must have free to take the servers: a server is ~40 MB (initdb's cluster) and
 * ~8.5 MB a database (the migrated template and each clone a worker keeps: 88 MB with five), a
 * worker runs one, and a container's default `/dev/shm` is 64 MB — a disk is better than full.
 */
const TMPFS_FREE_MIN = 1024 * 1024 * 1024

/**
 * Where a test server's files go: `/dev/shm` where it is a tmpfs this process may write with a GiB
 * free, the temp directory otherwise. A server's files are hundreds of small ones made and removed
 * as it runs, and on a disk each costs the server a journal's work: on this project's CI host
 * (ext4 on a VM disk) a clone of the migrated template (`CREATE DATABASE … TEMPLATE`, ~400 files)
 * took 280–320 ms of CPU, on tmpfs 8–16 (stop 66, docs/benchmarks/suite-cpu.md); `store/extend`
 * alone 4.8 → 0.9 CPU-s. A test database need not outlive the machine (no fsync either, below).
 * `durable` servers (the benchmark's) stay on disk, as production's are.
 */
function serverRoot(durable: boolean): string {
  if (durable) return tmpdir()
  try {
    const fs = statfsSync('/dev/shm')
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < TMPFS_FREE_MIN) return tmpdir()
    accessSync('/dev/shm', constants.W_OK)
    return '/dev/shm'
  } catch {
    return tmpdir()
  }
}

/** initdb's arguments after `-D`: the cluster every test server starts from. */
const INITDB_ARGS = ['-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']

/**
 * A data directory straight from initdb, made once per machine for this PostgreSQL, these
 * arguments, this user and the environment initdb reads (locale, time zone: named by a hash of
 * them all) and copied for every server: initdb runs PostgreSQL in bootstrap mode over and over,
 * ~1.2 s of CPU and 3–20 s of wall on a loaded 2-core machine, where the copy of its ~40 MB (a
 * cluster never started, so a plain copy is a whole one) takes a fraction. Made aside and renamed
 * into place, as main-bundle.ts does: a process never copies half a cluster, and the loser of a
 * race throws its own away. Null when something that is not a cluster is in the way (the caller
 * then runs initdb of its own, as before the cache, and says so once).
 */
function initializedCluster(bin: string, user: ReturnType<typeof pgUser>, root: string): string | null {
  const env = process.env
  const named = [
    bin,
    process.getuid?.(),
    user?.name,
    env.LC_ALL,
    env.LC_COLLATE,
    env.LANG,
    env.TZ,
    ...INITDB_ARGS,
  ]
  const base = `switchyard-initdb-${Bun.hash(named.join(' ')).toString(36)}`
  const dir = join(root, base)
  const data = join(dir, 'data')
  if (existsSync(join(data, 'PG_VERSION'))) return data
  // Only a whole cluster is ever renamed into place: anything else there is in the way for good.
  if (existsSync(dir)) return refused(dir)
  removeAbandoned(root, base)
  const aside = `${dir}.${process.pid}.${Date.now()}`
  mkdirSync(aside, { mode: 0o700 })
  if (user) chownSync(aside, user.uid, user.gid)
  try {
    run([join(bin, 'initdb'), '-D', join(aside, 'data'), ...INITDB_ARGS], user?.name ?? null)
  } catch (err) {
    rmSync(aside, { recursive: true, force: true })
    throw err
  }
  try {
    renameSync(aside, dir)
  } catch {
    rmSync(aside, { recursive: true, force: true }) // another process's is in place, or something else is
    if (!existsSync(join(data, 'PG_VERSION'))) return refused(dir)
  }
  return data
}

let cacheRefused = false

/** No cache while `dir` is in the way: said once a process. */
function refused(dir: string): null {
  if (!cacheRefused)
    console.error(`${dir} holds no PostgreSQL cluster: each server runs initdb until it is removed`)
  cacheRefused = true
  return null
}

/** Clusters being made aside (`<base>.<pid>.<ms>`) by processes that no longer run (killed mid-initdb): removed. */
function removeAbandoned(root: string, base: string): void {
  for (const name of readdirSync(root)) {
    if (!name.startsWith(`${base}.`)) continue
    const pid = Number(name.slice(base.length + 1).split('.')[0])
    if (Number.isInteger(pid) && pid > 0 && !alive(pid))
      rmSync(join(root, name), { recursive: true, force: true })
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** A server of initdb's cluster, copied into a new temporary directory (daemonized by pg_ctl). */
export async function bootPostgres(opts: { durable?: boolean } = {}): Promise<PostgresFiles> {
  const e = engines.postgres
  if (!e.ok) throw new Error(e.why)
  const user = pgUser()
  const root = serverRoot(opts.durable ?? false)
  const dir = mkdtempSync(join(root, 'switchyard-pg-'))
  chmodSync(dir, 0o700)
  if (user) chownSync(dir, user.uid, user.gid)
  const data = join(dir, 'data')
  const port = await freePort()
  const who = user?.name ?? null
  const cluster = initializedCluster(e.bin, user, root)
  // -a: the owner (PostgreSQL's user, when the tests run as root) and the 0700 mode come along.
  if (cluster) run(['cp', '-a', cluster, data], null)
  else run([join(e.bin, 'initdb'), '-D', data, ...INITDB_ARGS], who)
  // No fsync: a test database need not survive a power cut, and the machine is shared. No
  // autovacuum: its launcher forks a worker into every database each naptime, and the shared
  // server keeps its clones for the next test (clone-pool.ts) — 117 workers over the PostgreSQL
  // files in one run, for tables a test fills with a few rows (suite-cpu.md, stop 60).
  const fast = opts.durable ? '' : ' -c fsync=off -c full_page_writes=off -c autovacuum=off'
  const settings = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir} -c max_connections=200${fast}`
  run(
    [join(e.bin, 'pg_ctl'), '-D', data, '-o', settings, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'],
    who,
  )
  return { port, dir, data, bin: e.bin, who }
}

/** A server of the test file's own, stopped by it: for tests that stop, pause or load the engine. */
export async function startPostgres(opts: { durable?: boolean } = {}): Promise<TestPostgres> {
  const { port, dir, data, bin, who } = await bootPostgres(opts)
  let n = 0
  const admin = new Bun.SQL(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1 })
  return {
    port,
    pids() {
      const main = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
      const r = spawnSync('ps', ['--ppid', String(main), '-o', 'pid='], { encoding: 'utf8' })
      return [
        main,
        ...r.stdout
          .split('\n')
          .filter((l) => l.trim())
          .map(Number),
      ]
    },
    async createDatabase() {
      const name = `sw_${process.pid}_${++n}`
      // A database name cannot be a bound parameter; this one is built from two integers.
      await admin.unsafe(`CREATE DATABASE ${name}`)
      return `postgres://postgres@127.0.0.1:${port}/${name}`
    },
    async stop() {
      await admin.close()
      try {
        run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop'], who)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

export interface TestRedis {
  port: number
  pid(): number | null
  url: string
  /** Empties every database (between tests). */
  flush(): Promise<void>
  /** SIGKILL (no save: the windows are lost, as on a crash without AOF). */
  kill(): Promise<void>
  /** Starts it again on the same port. */
  restart(): Promise<void>
  stop(): Promise<void>
}

export async function startRedis(): Promise<TestRedis> {
  const e = engines.redis
  if (!e.ok) throw new Error(e.why)
  const dir = tempDir('switchyard-redis-')
  const port = await freePort()
  let proc: ReturnType<typeof Bun.spawn> | null = null
  const launch = async () => {
    proc = Bun.spawn(
      [
        e.bin,
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
      { stdout: 'ignore', stderr: 'ignore' },
    )
    for (let i = 0; i < 200; i++) {
      try {
        const c = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
        c.end()
        return
      } catch {
        await Bun.sleep(25)
      }
    }
    throw new Error(`redis-server did not listen on ${port}`)
  }
  await launch()
  const kill = async () => {
    const p = proc
    proc = null
    if (!p) return
    p.kill('SIGKILL')
    await p.exited
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    pid: () => proc?.pid ?? null,
    async flush() {
      const c = new Bun.RedisClient(`redis://127.0.0.1:${port}/0`)
      await c.send('FLUSHALL', [])
      c.close()
    },
    kill,
    restart: launch,
    async stop() {
      await kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
