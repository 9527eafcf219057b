/**
 * @module
 * What every command shares: the resolved config (flags > environment > file), output in
 * text or `--json`, and the store opened on demand.
 */
import { AccountService } from '../accounts/service.ts'
import { type Config, loadConfigFile } from '../config/index.ts'
import { openStores, type Store } from '../store/index.ts'
import { systemClock } from '../util/clock.ts'
import { flagString, type Parsed } from './args.ts'

export const GLOBAL_FLAGS = ['config', 'db', 'json', 'help'] as const

export interface Io {
  out(text: string): void
  err(text: string): void
  env: Record<string, string | undefined>
}

export const processIo: Io = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  env: process.env,
}

export function configPath(p: Parsed, io: Io): string {
  return flagString(p, 'config') ?? io.env.SWITCHYARD_CONFIG ?? './switchyard.yaml'
}

export async function loadConfig(p: Parsed, io: Io): Promise<Config> {
  const config = await loadConfigFile(configPath(p, io), io.env)
  const db = flagString(p, 'db') ?? io.env.SWITCHYARD_DB
  // --db takes a SQLite path or a PostgreSQL URL, and replaces whichever the file names.
  if (db && /^postgres(ql)?:\/\//.test(db)) config.database.url = db
  else if (db) {
    config.database.path = db
    config.database.url = null
  }
  return config
}

export class Output {
  constructor(
    private readonly io: Io,
    readonly json: boolean,
  ) {}

  /** Prints `doc` as exactly one JSON document, or as text via `render`. */
  result(doc: unknown, render: () => string): void {
    this.io.out(this.json ? JSON.stringify(doc, null, 2) : render())
  }
}

export async function withAccounts<T>(
  p: Parsed,
  io: Io,
  fn: (svc: AccountService, store: Store, config: Config) => Promise<T>,
): Promise<T> {
  const config = await loadConfig(p, io)
  const store = await openStores(config)
  try {
    return await fn(new AccountService(store, config, systemClock), store, config)
  } finally {
    await store.close()
  }
}

/** Fixed-width text table. */
export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  if (!rows.length) return '(none)'
  const cell = (v: unknown) =>
    v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v)
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  return [
    line(columns.map((c) => c.toUpperCase())),
    ...rows.map((r) => line(columns.map((c) => cell(r[c])))),
  ].join('\n')
}

export function fields(obj: Record<string, unknown>): string {
  const w = Math.max(...Object.keys(obj).map((k) => k.length))
  return Object.entries(obj)
    .map(
      ([k, v]) =>
        `${k.padEnd(w)}  ${v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
    )
    .join('\n')
}
