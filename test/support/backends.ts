/**
 * Runs a suite against every storage backend: the embedded SQLite, PostgreSQL, and PostgreSQL
 * with admissions in Redis. The engines are the test process's (shared-engines.ts: started once
 * per process, not per file); every test gets a fresh database cloned from a migrated template
 * (and an empty Redis). A backend whose engine is not installed is skipped, with a printed line.
 */
import { afterAll, beforeAll } from 'bun:test'
import { engines, skipWithout } from './engines.ts'
import { type SharedPostgres, type SharedRedis, sharedPostgres, sharedRedis } from './shared-engines.ts'

export interface BackendUrls {
  databaseUrl?: string
  redisUrl?: string
}

export interface Backend {
  name: 'sqlite' | 'postgres' | 'postgres+redis'
  /** True when its engines are missing: the suite is skipped (and says so). */
  skip: boolean
  /** Fresh, migrated storage for one test; {} for SQLite (the test gateway makes a temp file). */
  fresh(): Promise<BackendUrls>
  redis(): SharedRedis | null
}

/**
 * Call at the top level of a test file; returns the backends to loop over. `only`: the one backend
 * the file runs, whose engines alone are booted (SQLite: none).
 */
export function backends(file: string, only?: Backend['name']): Backend[] {
  let pg: SharedPostgres | null = null
  let redis: SharedRedis | null = null
  const want = (name: Backend['name']) => only === undefined || only === name
  const needPg = engines.postgres.ok && (want('postgres') || want('postgres+redis'))
  const needRedis = engines.redis.ok && want('postgres+redis')
  beforeAll(async () => {
    if (needPg) pg = await sharedPostgres()
    if (needPg && needRedis) redis = await sharedRedis()
  }, 60_000)
  afterAll(async () => {
    await pg?.release()
  })
  const freshPg = () => pg!.clone()
  // Built only when wanted: a backend left out prints no skip line for its missing engines.
  const all: Backend[] = []
  if (want('sqlite')) all.push({ name: 'sqlite', skip: false, fresh: async () => ({}), redis: () => null })
  if (want('postgres'))
    all.push({
      name: 'postgres',
      skip: skipWithout(['postgres'], `${file} on PostgreSQL`),
      fresh: async () => ({ databaseUrl: await freshPg() }),
      redis: () => null,
    })
  if (want('postgres+redis'))
    all.push({
      name: 'postgres+redis',
      skip: skipWithout(['postgres', 'redis'], `${file} on PostgreSQL + Redis`),
      fresh: async () => {
        await redis!.flush()
        return { databaseUrl: await freshPg(), redisUrl: redis!.url }
      },
      redis: () => redis,
    })
  return all
}

/**
 * PostgreSQL connections per store in tests at most, unless the document sets
 * `database.pool_size`. A store opens them as its calls need them (src/store/postgres/pool.ts),
 * and each is a backend forked by the server — ~50 ms of CPU on this machine (copy-on-write faults
 * after the fork), more than most tests' queries cost: a test's burst of calls opens two, not ten.
 * Two still let one call wait on a lock while another runs.
 */
export const TEST_POOL_SIZE = 2

/** The config keys that select a backend, merged into a test config document. */
export function backendDoc(doc: Record<string, unknown>, urls: BackendUrls): Record<string, unknown> {
  if (!urls.databaseUrl) return doc
  const limits = {
    ...(doc.limits as object | undefined),
    ...(urls.redisUrl ? { redis_url: urls.redisUrl } : {}),
  }
  const { path: _path, ...database } = (doc.database as Record<string, unknown> | undefined) ?? {}
  return { ...doc, database: { pool_size: TEST_POOL_SIZE, ...database, url: urls.databaseUrl }, limits }
}
