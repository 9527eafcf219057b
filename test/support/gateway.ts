/**
 * Starts the real gateway on port 0 with a temporary database and a config built in code.
 */
import { Database } from 'bun:sqlite'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildDeps } from '../../src/app/build.ts'
import { startServer } from '../../src/app/serve.ts'
import { parseConfig } from '../../src/config/index.ts'
import { type Completion, openStores } from '../../src/store/index.ts'
import { migrate } from '../../src/store/sqlite/migrations.ts'
import type { Clock } from '../../src/util/clock.ts'
import { createLogger } from '../../src/util/log.ts'
import { type BackendUrls, backendDoc } from './backends.ts'
import { fitSharedPlans, tempDir, testConfigDoc } from './config-doc.ts'
import { starts } from './starts.ts'

export { ADMIN_TOKEN, DEMO_PROVIDER, PLANS, tempDir, testConfigDoc } from './config-doc.ts'

export interface TestGateway {
  url: string
  dir: string
  logs: string[]
  deps: ReturnType<typeof buildDeps>
  /** Creates an account (if new) on `plan` and returns a fresh key for it. */
  key(account: string, plan?: string, days?: number): Promise<{ id: string; key: string }>
  stop(): Promise<void>
}

export async function startGateway(
  opts: { doc?: Record<string, unknown>; clock?: Clock; dbPath?: string; backend?: BackendUrls } = {},
): Promise<TestGateway> {
  starts.gateways++
  const dir = tempDir()
  const doc = oneCallPerRequest(fitSharedPlans(opts.doc ?? testConfigDoc()))
  const database = {
    ...(doc.database as object | undefined),
    path: opts.dbPath ?? join(dir, 'switchyard.db'),
  }
  const config = parseConfig(backendDoc({ ...doc, database }, opts.backend ?? {}), 'test')
  if (!opts.dbPath && !config.database.url) writeMigrated(config.database.path)
  const logs: string[] = []
  const log = createLogger('debug', (l) => logs.push(l))
  // A manual clock must drive the engines too, or moving it would not move their windows.
  const store = config.database.url
    ? await openStores(config, { callerTime: opts.clock !== undefined, warn: (m, f) => log.warn(m, f) })
    : undefined
  const deps = buildDeps(config, { clock: opts.clock, log, store })
  const running = startServer(config, deps)
  return {
    url: running.url,
    dir,
    logs,
    deps,
    async key(account, plan, days) {
      if (!(await deps.store.getAccount(account))) await deps.accounts.createAccount(account, plan, days)
      const k = await deps.accounts.createKey(account, 'test')
      return { id: k.id, key: k.key }
    },
    async stop() {
      await running.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The migrated schema's bytes, made once per test process (writeMigrated). */
let migrated: Uint8Array | undefined

/**
 * Writes a new gateway's own database as an already-migrated file, as the store creates it
 * (owner-only), from one database migrated in memory: migrating each new file cost ~9 ms of a
 * start's ~28 (docs/benchmarks/suite-cpu.md, stop 60), and a run starts a few hundred. The store
 * then finds every migration recorded and applies none. Migrations on a new file stay tested
 * where a database is given (`dbPath`), in every spawned `serve` and CLI command, and in
 * test/store.
 */
function writeMigrated(path: string): void {
  if (!migrated) {
    const db = new Database(':memory:')
    migrate(db, Date.now())
    migrated = db.serialize()
    db.close()
  }
  writeFileSync(path, migrated, { mode: 0o600, flag: 'wx' })
}

/**
 * Tests written before the attempt loop (DESIGN §10) describe one upstream call per request and
 * fault one upstream many times in a row: a provider whose config says nothing of `retry` or
 * `circuit` gets no retries and a circuit that never opens here. Resilience tests set both.
 */
function oneCallPerRequest(doc: Record<string, unknown>): Record<string, unknown> {
  const providers = doc.providers as Array<Record<string, unknown>> | undefined
  if (!Array.isArray(providers)) return doc
  return {
    ...doc,
    providers: providers.map((p) =>
      p.retry !== undefined || p.circuit !== undefined
        ? p
        : { ...p, retry: { attempts: 0 }, circuit: { failures: 1_000_000 } },
    ),
  }
}

/** Every usage record `gw` makes from now on, in order (its recorder's `record`, wrapped). */
export function recordsOf(gw: TestGateway): Completion[] {
  const records: Completion[] = []
  const recorder = gw.deps.recorder
  const record = recorder.record.bind(recorder)
  recorder.record = (c) => {
    records.push(c)
    record(c)
  }
  return records
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
