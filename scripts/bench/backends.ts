/**
 * @module
 * `bun run bench --backend postgres|redis [--quick]`: the same gateway on SQLite and on the named
 * backend (a throwaway PostgreSQL, plus redis-server for `redis`, started like the tests start
 * them, but with fsync on), measured side by side — closed-loop throughput and latency, CPU per request of the
 * gateway and of the engines, the admission's cost in-process — and then two replicas of the
 * backend behind one load generator. Every account is on a plan with limits, so the windows are
 * counted on every request.
 */
import { join } from 'node:path'
import { parseConfig } from '../../src/config/index.ts'
import { openStores } from '../../src/store/index.ts'
import { migratePostgresUrl } from '../../src/store/postgres/index.ts'
import type { AdmitInput, Store } from '../../src/store/types.ts'
import { startPostgres, startRedis, type TestPostgres, type TestRedis } from '../../test/support/engines.ts'
import { runBunLoad } from './loadgen-bun.ts'
import { cpuMicros } from './proc-stats.ts'
import { configDoc, type Gateway, type Mocks, startGateway, startMocks, workspace } from './processes.ts'
import { fmt } from './report.ts'
import { chatTarget } from './workload.ts'

export type BackendName = 'sqlite' | 'postgres' | 'redis'

interface Engines {
  pg: TestPostgres
  redis: TestRedis | null
}

interface Run {
  backend: string
  replicas: number
  rps: number
  p50Ms: number
  p99Ms: number
  errors: number
  gatewayCpuUs: number
  engineCpuUs: number
}

interface AdmitCost {
  backend: string
  sequentialUs: number
  concurrent16Us: number
}

/** Plenty of room: the limits are counted on every request but never refuse one. */
const PLAN = { rpm: 10_000_000, rpd: 100_000_000, models: ['*'] }

function engineCpu(backend: BackendName, e: Engines): number {
  if (backend === 'sqlite') return 0
  let us = 0
  for (const pid of e.pg.pids()) {
    try {
      us += cpuMicros(pid)
    } catch {
      // A backend process that ended between listing and reading.
    }
  }
  const r = e.redis?.pid()
  if (backend === 'redis' && r) us += cpuMicros(r)
  return us
}

async function docFor(backend: BackendName, e: Engines) {
  const url = backend === 'sqlite' ? null : await e.pg.createDatabase()
  return (d: Record<string, unknown>) => ({
    ...d,
    database: url ? { url, pool_size: 16 } : d.database,
    limits: { suspension: { enabled: false }, ...(backend === 'redis' ? { redis_url: e.redis!.url } : {}) },
    logging: { level: 'warn', access: false },
    plans: { ...(d.plans as object), limited: PLAN },
    default_plan: 'limited',
  })
}

async function measure(
  backend: BackendName,
  gws: Gateway[],
  e: Engines,
  connections: number,
  seconds: number,
): Promise<Run> {
  const targets = gws.map((g) => chatTarget(g.url, 'mock/bench', false, g.key))
  await runBunLoad(targets, connections, 1) // warm-up
  const gw0 = gws.map((g) => cpuMicros(g.pid))
  const en0 = engineCpu(backend, e)
  const r = await runBunLoad(targets, connections, seconds)
  if (r.errors) console.error(`  errors: ${JSON.stringify(r.errorDetail)}`)
  const gwUs = gws.reduce((s, g, i) => s + cpuMicros(g.pid) - gw0[i]!, 0)
  const enUs = engineCpu(backend, e) - en0
  const n = Math.max(1, r.requests)
  return {
    backend,
    replicas: gws.length,
    rps: r.rps,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    errors: r.errors,
    gatewayCpuUs: gwUs / n,
    engineCpuUs: enUs / n,
  }
}

/** `store.admit` in-process: one at a time (wall µs each), and 16 at once (wall µs per admission). */
async function admitCost(
  backend: BackendName,
  e: Engines,
  mocks: Mocks,
  dir: string,
  iterations: number,
): Promise<AdmitCost> {
  const edit = await docFor(backend, e)
  const doc = edit(configDoc(mocks, join(dir, `admit-${backend}.db`)))
  const url = (doc.database as { url?: string }).url
  if (url) await migratePostgresUrl(url, Date.now())
  const store: Store = await openStores(parseConfig(doc, 'bench'))
  try {
    const now = Date.now()
    const a = await store.createAccount({
      name: 'm',
      plan: 'limited',
      planStartedAt: now,
      planExpiresAt: null,
      now,
    })
    await store.createKey({ id: 'k', accountId: a.id, name: null, prefix: 'sk-sy-xxxxxx', hash: 'h', now })
    const input = (i: number): AdmitInput => ({
      accountId: a.id,
      keyId: 'k',
      model: 'mock/bench',
      requestId: `r${i}`,
      stream: false,
      now: Date.now(),
      rpm: PLAN.rpm,
      rpd: PLAN.rpd,
      suspension: null,
    })
    for (let i = 0; i < 200; i++) await store.admit(input(i))
    let t0 = performance.now()
    for (let i = 0; i < iterations; i++) await store.admit(input(i))
    const sequentialUs = ((performance.now() - t0) * 1000) / iterations
    t0 = performance.now()
    for (let i = 0; i < iterations; i += 16)
      await Promise.all(Array.from({ length: 16 }, (_, j) => store.admit(input(i + j))))
    const concurrent16Us = ((performance.now() - t0) * 1000) / iterations
    return { backend, sequentialUs, concurrent16Us }
  } finally {
    await store.close()
  }
}

export async function runBackendBench(
  backend: Exclude<BackendName, 'sqlite'>,
  quick: boolean,
  log: (line: string) => void,
): Promise<string> {
  const seconds = quick ? 3 : 8
  const connections = 64
  const iterations = quick ? 1_000 : 5_000
  log(`starting PostgreSQL${backend === 'redis' ? ' and redis-server' : ''} ...`)
  const e: Engines = {
    pg: await startPostgres({ durable: true }),
    redis: backend === 'redis' ? await startRedis() : null,
  }
  const mocks = await startMocks(20)
  const runs: Run[] = []
  const costs: AdmitCost[] = []
  const started: Gateway[] = []
  const spaces = [workspace(), workspace()]
  try {
    for (const b of ['sqlite', backend] as const) {
      log(`${b}: admission cost in-process (${iterations} admissions) ...`)
      costs.push(await admitCost(b, e, mocks, spaces[0]!.dir, iterations))
      const ws = b === 'sqlite' ? spaces[0]! : spaces[1]!
      const doc = await docFor(b, e)
      const gw = await startGateway(ws, mocks, { binary: false, doc, plan: 'limited' })
      started.push(gw)
      log(`${b}: one replica, ${connections} connections, ${seconds} s ...`)
      runs.push(await measure(b, [gw], e, connections, seconds))
      if (b !== 'sqlite') {
        const second = await startGateway(ws, mocks, { binary: false, doc, replicaOf: gw })
        started.push(second)
        log(`${b}: two replicas behind one generator ...`)
        runs.push(await measure(b, [gw, second], e, connections, seconds))
      }
    }
  } finally {
    for (const g of started) await g.stop()
    await mocks.stop()
    await e.redis?.stop()
    await e.pg.stop()
    for (const w of spaces) w.remove()
  }
  const name = (b: string) =>
    b === 'redis' ? 'PostgreSQL + Redis' : b === 'postgres' ? 'PostgreSQL' : 'SQLite'
  const lines = [
    `| backend | replicas | req/s (c${connections}) | p50 ms | p99 ms | errors | gateway CPU µs/req | engine CPU µs/req |`,
    '|---|---|---|---|---|---|---|---|',
    ...runs.map(
      (r) =>
        `| ${name(r.backend)} | ${r.replicas} | ${fmt(r.rps)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.errors} | ${fmt(r.gatewayCpuUs)} | ${r.backend === 'sqlite' ? '(in the gateway)' : fmt(r.engineCpuUs)} |`,
    ),
    '',
    '| backend | admission, one at a time (µs) | admission, 16 at once (µs each) |',
    '|---|---|---|',
    ...costs.map((c) => `| ${name(c.backend)} | ${fmt(c.sequentialUs)} | ${fmt(c.concurrent16Us)} |`),
  ]
  return lines.join('\n')
}
