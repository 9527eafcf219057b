/**
 * @module
 * One PostgreSQL and one Redis per test process — the single `bun test` process, or each
 * `--parallel` worker — shared by the files it runs one after another. Starting an engine costs
 * ~1.6 s on a quiet machine (3 s loaded), and migrating a database 70–106 ms, so each engine
 * starts once per process with a template database migrated once, and every test gets a clone
 * of it (`CREATE DATABASE … TEMPLATE`) — one a file used before, once put back into the
 * template's state, where there is one (clone-pool.ts).
 *
 * Under `--isolate` (Bun's default with `--parallel`) every file of a worker gets a fresh global
 * object, module registry and environment, and the subprocesses a file spawned are killed when it
 * ends; `npm test` passes `--no-isolate` (one registry per worker: see package.json), but a file
 * must not count on either. So the engines are daemons (pg_ctl's, `redis-server --daemonize`),
 * found again through a state file named by the process id, and a watchdog outside the test
 * process (setsid) stops them and removes their directories when the process exits, however it
 * exits.
 *
 * Tests that stop, pause or restart an engine start their own (engines.ts).
 */
import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { migratePostgresUrl } from '../../src/store/postgres/index.ts'
import { forget, restore, retire, type TemplateFacts, templateFacts } from './clone-pool.ts'
import { tempDir } from './config-doc.ts'
import { bootPostgres, engines, freePort, type PostgresFiles } from './engines.ts'

/** The migrated database every clone copies; never connected to after it is built. */
const TEMPLATE = 'sw_template'

interface State {
  pg?: PostgresFiles
  /** What a used clone must match to be handed out again (clone-pool.ts). */
  template?: TemplateFacts
  /** Clones not handed out: made ahead of need, or `used` and retired (clone-pool.ts). */
  clones?: Array<{ name: string; used: boolean }>
  redis?: { port: number; dir: string }
}

const statePath = () => join(tmpdir(), `switchyard-engines-${process.pid}.json`)

function readState(): State {
  try {
    return JSON.parse(readFileSync(statePath(), 'utf8')) as State
  } catch {
    return {}
  }
}

const writeState = (state: State) => writeFileSync(statePath(), JSON.stringify(state))

const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`

/**
 * Writes the state and (re)starts the watchdog, which waits for this process to exit and then
 * stops what the state names. One watchdog per engine started; each stops only its own engine.
 * `tail --pid` checks the process once a second without a fork: a `while kill -0 …; do sleep 1`
 * loop forked a `sleep` a second per watchdog, ~8 ms of CPU a second each on this host at load 17
 * (suite-cpu.md, stop 61).
 */
function remember(state: State, stopScript: string): void {
  writeState(state)
  const wait = `tail --pid=${process.pid} -f /dev/null; ${stopScript}; rm -f ${q(statePath())}`
  // The outer shell exits at once, so the watchdog is no child of this process (Bun would kill it
  // with the file that spawned it).
  spawnSync('sh', ['-c', `setsid sh -c ${q(wait)} </dev/null >/dev/null 2>&1 &`])
}

async function answers(port: number): Promise<boolean> {
  try {
    const c = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
    c.end()
    return true
  } catch {
    return false
  }
}

export interface SharedPostgres {
  port: number
  /**
   * A database holding the migrated schema and nothing else, for the caller alone until
   * `release()`; its URL's user is a role made for it (a superuser, as `postgres` is).
   */
  clone(): Promise<string>
  /** A fresh, empty database (unmigrated), dropped by `release()`. */
  createDatabase(): Promise<string>
  /**
   * Ends every session of the databases this handle gave out; keeps each clone for the next
   * caller, who gets it back in the template's state (or drops it) and drops the others. The
   * server and the process's admin connection to it keep running.
   */
  release(): Promise<void>
}

async function postgresFiles(): Promise<PostgresFiles> {
  const known = readState().pg
  if (known && (await answers(known.port))) return known
  const pg = await bootPostgres()
  const template = `postgres://postgres@127.0.0.1:${pg.port}/${TEMPLATE}`
  const admin = new Bun.SQL(`postgres://postgres@127.0.0.1:${pg.port}/postgres`, { max: 1 })
  try {
    await admin.unsafe(`CREATE DATABASE ${TEMPLATE}`)
  } finally {
    await admin.close()
  }
  await migratePostgresUrl(template, Date.now())
  const facts = await templateFacts(template)
  const ctl = `${q(join(pg.bin, 'pg_ctl'))} -D ${q(pg.data)} -m immediate -w stop`
  const stop = `${pg.who ? `runuser -u ${pg.who} -- ` : ''}${ctl}; rm -rf ${q(pg.dir)}`
  remember({ ...readState(), pg, template: facts, clones: [] }, stop)
  return pg
}

/** A clone kept in the state file, if there is one: the last one kept. */
function takeClone(): { name: string; used: boolean } | undefined {
  const state = readState()
  const clone = state.clones?.pop()
  if (clone) writeState(state)
  return clone
}

function keepClone(name: string, used: boolean): void {
  const state = readState()
  writeState({ ...state, clones: [...(state.clones ?? []), { name, used }] })
}

/**
 * The connection (`postgres`'s, to the `postgres` database) that makes, retires and drops clones,
 * one per server and test process, as the clones' keepers are (clone-pool.ts): under
 * `--no-isolate` every handle of a worker's files uses it, where each `sharedPostgres()` opened
 * one and closed it at release — ~47 backends forked a run (suite-cpu.md, stop 61). Bun reconnects
 * it if the server closed it; under `--isolate` it goes with the file's module instance.
 */
const admins = new Map<number, SQL>()

function adminOf(port: number): SQL {
  let admin = admins.get(port)
  if (!admin) {
    admin = new SQL(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1 })
    admins.set(port, admin)
  }
  return admin
}

/**
 * The process's PostgreSQL, started on first use. A clone a file used is retired when the file
 * releases it and restored when it is handed out again (clone-pool.ts); a new one is made only
 * when none is left. Cloning costs 75–600 ms of wall
 * on this machine (the clone copies the ~8 MB of system catalogs), so while new ones are needed,
 * the next is made while a test runs.
 */
export async function sharedPostgres(): Promise<SharedPostgres> {
  const e = engines.postgres
  if (!e.ok) throw new Error(e.why)
  const { port } = await postgresFiles()
  const admin = adminOf(port)
  const url = (name: string, user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${name}`
  // A database and the role it was handed out under (null: `postgres`'s, a database not cloned).
  const handed: Array<{ name: string; role: string | null }> = []
  // Database and role names cannot be bound parameters; these are `sw_`, `sw_u` and 32 hex digits.
  const hex = () => randomUUID().replaceAll('-', '')
  const create = async (template: string) => {
    const name = `sw_${hex()}`
    await admin.unsafe(`CREATE DATABASE ${name}${template}`)
    return name
  }
  const cloneNow = () => create(` TEMPLATE ${TEMPLATE}`)
  const drop = async (name: string) => {
    await forget(name)
    // FORCE: a gateway a test left running may still hold connections.
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
  let next: Promise<string> | null = null
  return {
    port,
    async clone() {
      // Each taken before any await: two clone() calls at once (tests started side by side) get
      // two databases, not both the one kept or prefetched. The admin connection is one, so the
      // statements still run one after another.
      let name: string | null = null
      const facts = readState().template
      while (!name) {
        const kept = takeClone()
        if (!kept) break
        if (!kept.used || (facts && (await restore(admin, url, kept.name, facts)))) name = kept.name
        else await drop(kept.name)
      }
      if (!name) {
        const taken = next ?? cloneNow()
        const made = cloneNow()
        next = made
        // A failed prefetch is made again by the next clone() (and reported there).
        made.catch(() => {
          if (next === made) next = null
        })
        name = await taken
      }
      const role = `sw_u${hex()}`
      handed.push({ name, role })
      await admin.unsafe(`CREATE ROLE ${role} LOGIN SUPERUSER`)
      return url(name, role)
    },
    async createDatabase() {
      const name = await create('')
      handed.push({ name, role: null })
      return url(name)
    },
    async release() {
      const left = await next?.catch(() => null)
      if (left) keepClone(left, false)
      for (const { name, role } of handed.splice(0)) {
        if (role && (await retire(admin, name, role))) keepClone(name, true)
        else {
          await drop(name)
          if (role) await admin.unsafe(`DROP ROLE IF EXISTS ${role}`)
        }
      }
    },
  }
}

export interface SharedRedis {
  port: number
  url: string
  /** Empties every database (between tests). */
  flush(): Promise<void>
}

/** The process's redis-server, started on first use. */
export async function sharedRedis(): Promise<SharedRedis> {
  const e = engines.redis
  if (!e.ok) throw new Error(e.why)
  let redis = readState().redis
  if (!redis || !(await answers(redis.port))) {
    const dir = tempDir('switchyard-redis-')
    const port = await freePort()
    const pidfile = join(dir, 'redis.pid')
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
    const r = spawnSync(e.bin, [...args, '--dir', dir, '--daemonize', 'yes', '--pidfile', pidfile])
    if (r.status !== 0) throw new Error(`redis-server failed: ${r.stderr}`)
    let up = false
    for (let i = 0; i < 400 && !up; i++) {
      up = await answers(port)
      if (!up) await Bun.sleep(25)
    }
    if (!up) throw new Error(`redis-server did not listen on ${port}`)
    redis = { port, dir }
    remember({ ...readState(), redis }, `kill -9 "$(cat ${q(pidfile)})"; rm -rf ${q(dir)}`)
  }
  const url = `redis://127.0.0.1:${redis.port}/0`
  return {
    port: redis.port,
    url,
    async flush() {
      const c = new Bun.RedisClient(url)
      await c.send('FLUSHALL', [])
      c.close()
    },
  }
}
