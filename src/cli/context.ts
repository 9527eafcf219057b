/**
 * @module
 * What every command shares: the flags and arguments it takes, the resolved config (flags >
 * environment > file), output in text or `--json`, and the store opened on demand.
 */
import { statSync } from 'node:fs'
import { join } from 'node:path'
import type { AccountService } from '../accounts/service.ts'
import { type Config, ConfigError, type LoadOptions, loadConfigFile } from '../config/index.ts'
import { listenHostProblem } from '../config/listen-host.ts'
import type { Store } from '../store/index.ts'
import { audit } from '../util/audit.ts'
import { systemClock } from '../util/clock.ts'
import { GatewayError } from '../util/errors.ts'
import { createLogger, type Logger } from '../util/log.ts'
import { checkFlags, checkPositionals, flagInt, flagString, type Parsed, UsageError } from './args.ts'
import type { Io } from './io.ts'
import { quoted } from './text.ts'

const GLOBAL_FLAGS = ['config', 'db', 'json', 'help'] as const

/**
 * What one command takes: `words` positionals at most (its own words included: `accounts show
 * NAME` is 3) and `flags` besides the global ones. `usage` is shown when they are wrong.
 */
export interface CommandSpec {
  usage: string
  words: number
  flags?: readonly string[]
}

/** Refuses flags and positionals `spec` does not take, before anything is opened. */
export function checkCommand(p: Parsed, spec: CommandSpec): void {
  checkFlags(p, [...GLOBAL_FLAGS, ...(spec.flags ?? [])])
  checkPositionals(p, spec.words, spec.usage)
}

/** The spec of `group`'s subcommand (`p.positionals[1]`), checked; else a usage error listing them. */
export function subcommand<S extends string>(
  p: Parsed,
  group: string,
  specs: Record<S, CommandSpec>,
): { sub: S; spec: CommandSpec } {
  const sub = p.positionals[1]
  if (sub === undefined || !Object.hasOwn(specs, sub)) {
    const names = Object.keys(specs)
    const choice =
      names.length === 1 ? `'${group} ${names[0]}'` : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`
    throw new UsageError(`unknown ${group} command ${quoted(sub ?? '')}; use ${choice}`)
  }
  const spec = specs[sub as S]
  checkCommand(p, spec)
  return { sub: sub as S, spec }
}

export function configPath(p: Parsed, io: Io): string {
  // An empty variable is unset (an env file's `SWITCHYARD_CONFIG=`), as SWITCHYARD_DB, HOST and PORT are.
  return flagString(p, 'config') ?? (io.env.SWITCHYARD_CONFIG || './switchyard.yaml')
}

/**
 * `loadConfigFile`, which reports a directory as a file not found: a directory is said to be one,
 * with the file it most likely meant.
 */
export async function readConfigFile(
  path: string,
  env: Record<string, string | undefined>,
  opts: LoadOptions = {},
): Promise<Config> {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    throw new ConfigError(path, [
      {
        path: '/',
        message: `is a directory, not a config file; pass the YAML file itself, e.g. --config ${join(path, 'switchyard.yaml')}`,
      },
    ])
  }
  return loadConfigFile(path, env, opts)
}

/** `--db` (or `SWITCHYARD_DB`) names a PostgreSQL database, not a SQLite path. */
export const isPostgresUrl = (db: string): boolean => /^postgres(ql)?:\/\//.test(db)

/** Commands that never call a provider pass `{ secrets: false }`: provider keys may be unset. */
export async function loadConfig(p: Parsed, io: Io, opts: LoadOptions = {}): Promise<Config> {
  const config = await readConfigFile(configPath(p, io), io.env, opts)
  const db = flagString(p, 'db') ?? io.env.SWITCHYARD_DB
  // --db takes a SQLite path or a PostgreSQL URL, and replaces whichever the file names.
  if (db && isPostgresUrl(db)) config.database.url = db
  else if (db) {
    config.database.path = db
    config.database.url = null
  }
  return config
}

/** What a command prints: text, or with `--json` exactly one JSON document. */
export class Output {
  readonly json: boolean

  constructor(
    p: Parsed,
    private readonly io: Io,
  ) {
    this.json = p.flags.json === true
  }

  /** Prints `doc` as exactly one JSON document, or as text via `render`. */
  result(doc: unknown, render: () => string): void {
    this.io.out(this.json ? JSON.stringify(doc, null, 2) : render())
  }

  /**
   * Prints what `done` gives (`doc` of it as JSON, or `render`ed as text), once it is done; the
   * command's exit code, 0 (a failure throws).
   */
  async printed<R>(
    done: Promise<R>,
    render: (r: R) => string,
    doc: (r: R) => unknown = (r) => r,
  ): Promise<number> {
    const r = await done
    this.result(doc(r), () => render(r))
    return 0
  }
}

/** What a command that changes something needs: the service, and an audit line writer. */
export interface Change {
  /**
   * Runs one change and writes its audit line (`actor: cli`) to stderr, whatever the outcome.
   * `target` names what is changed (an account or key id), never a secret; `changed` says what it
   * is now (the line's `change`, as the admin API's lines have it), never a secret either.
   */
  audited<R>(
    action: string,
    target: string,
    fn: () => Promise<R>,
    changed: (r: R) => Record<string, unknown>,
  ): Promise<R>
}

export async function withAccounts<T>(
  p: Parsed,
  io: Io,
  fn: (svc: AccountService, store: Store, config: Config, change: Change) => Promise<T>,
): Promise<T> {
  const config = await loadConfig(p, io, { secrets: false })
  // The stores and the accounts service are imported here, not at the top: every command imports
  // this module, and `serve`'s supervisor and `reload` read only the config (~50 ms of CPU less at
  // each `serve`; docs/decisions.md, "Commands load lazily").
  const { openDatabase } = await import('./database.ts')
  const { AccountService } = await import('../accounts/service.ts')
  const store = await openDatabase(config)
  const log: Logger = createLogger(config.logging.level, io.err)
  const change: Change = {
    async audited(action, target, run, changed) {
      try {
        const r = await run()
        audit(log, { actor: 'cli', action, target, change: changed(r), outcome: 'ok' })
        return r
      } catch (err) {
        const outcome = err instanceof GatewayError ? err.code : 'error'
        audit(log, { actor: 'cli', action, target, outcome })
        throw err
      }
    },
  }
  try {
    return await fn(new AccountService(store, config, systemClock), store, config, change)
  } finally {
    await store.close()
  }
}

/**
 * An integer from a flag, else from an environment variable; a value that is not one is an error
 * naming where it came from (`PORT=abc` must not silently mean the default).
 */
export function intSetting(
  p: Parsed,
  io: Io,
  flag: string,
  envName: string,
  min: number,
  max: number,
): number | undefined {
  const fromFlag = flagInt(p, flag, min, max)
  if (fromFlag !== undefined) return fromFlag
  const v = io.env[envName]
  if (v === undefined || v === '') return undefined
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new UsageError(
      `environment variable ${envName} must be a whole number from ${min} to ${max}, got '${v}'`,
    )
  }
  return Number(v)
}

/**
 * The address `serve` listens on: `--host`, else env `HOST`, else the file's `server.host`; `from`
 * names where it came from (a listen failure says which to change). A value not of an address's
 * form is an error naming the flag or the variable (the file's is the config check's).
 */
export function hostSetting(p: Parsed, io: Io, file: string): { host: string | undefined; from: string } {
  const flag = flagString(p, 'host')
  const env = io.env.HOST || undefined
  const host = flag ?? env
  const from = flag !== undefined ? '--host' : env !== undefined ? 'env HOST' : `server.host in ${file}`
  const problem = host === undefined ? null : listenHostProblem(host)
  if (problem)
    throw new UsageError(`${flag !== undefined ? '--host' : 'environment variable HOST'} ${problem}`)
  return { host, from }
}
