/**
 * Runs a suite against every storage backend: the embedded SQLite, PostgreSQL, and PostgreSQL
 * with admissions in Redis. Engines start once per test file; every test gets a fresh database
 * (and an empty Redis). A backend whose engine is not installed is skipped, with a printed line.
 */
import { afterAll, beforeAll } from 'bun:test'
import { migratePostgresUrl } from '../../src/store/postgres/index.ts'
import {
  engines,
  skipWithout,
  startPostgres,
  startRedis,
  type TestPostgres,
  type TestRedis,
} from './engines.ts'

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
  redis(): TestRedis | null
}

/** Call at the top level of a test file; returns the backends to loop over. */
export function backends(file: string): Backend[] {
  let pg: TestPostgres | null = null
  let redis: TestRedis | null = null
  const needPg = engines.postgres.ok
  const needRedis = engines.redis.ok
  beforeAll(async () => {
    if (needPg) pg = await startPostgres()
    if (needPg && needRedis) redis = await startRedis()
  }, 60_000)
  afterAll(async () => {
    await redis?.stop()
    await pg?.stop()
  })
  const freshPg = async () => {
    const url = await pg!.createDatabase()
    await migratePostgresUrl(url, Date.now())
    return url
  }
  return [
    { name: 'sqlite', skip: false, fresh: async () => ({}), redis: () => null },
    {
      name: 'postgres',
      skip: skipWithout(['postgres'], `${file} on PostgreSQL`),
      fresh: async () => ({ databaseUrl: await freshPg() }),
      redis: () => null,
    },
    {
      name: 'postgres+redis',
      skip: skipWithout(['postgres', 'redis'], `${file} on PostgreSQL + Redis`),
      fresh: async () => {
        await redis!.flush()
        return { databaseUrl: await freshPg(), redisUrl: redis!.url }
      },
      redis: () => redis,
    },
  ]
}

/** The config keys that select a backend, merged into a test config document. */
export function backendDoc(doc: Record<string, unknown>, urls: BackendUrls): Record<string, unknown> {
  if (!urls.databaseUrl) return doc
  const limits = {
    ...(doc.limits as object | undefined),
    ...(urls.redisUrl ? { redis_url: urls.redisUrl } : {}),
  }
  const { path: _path, ...database } = (doc.database as Record<string, unknown> | undefined) ?? {}
  return { ...doc, database: { ...database, url: urls.databaseUrl }, limits }
}
