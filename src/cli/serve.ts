/**
 * @module
 * `switchyard serve [--host H] [--port P] [--workers N]`. With N > 1 this process serves too and
 * starts N-1 more on the same port (SO_REUSEPORT); all share the database.
 */
import { buildDeps } from '../server/build.ts'
import { startServer } from '../server/serve.ts'
import { describeDatabase, openStores } from '../store/index.ts'
import { createLogger } from '../util/log.ts'
import { checkFlags, flagInt, flagString, type Parsed } from './args.ts'
import { GLOBAL_FLAGS, type Io, loadConfig } from './context.ts'
import { exitWithParent, selfCommand, superviseWithEnv } from './process.ts'

export async function serveCommand(p: Parsed, io: Io): Promise<number> {
  checkFlags(p, [...GLOBAL_FLAGS, 'host', 'port', 'workers', 'worker-child'])
  const config = await loadConfig(p, io)
  const host = flagString(p, 'host') ?? io.env.HOST
  if (host) config.server.host = host
  const port = flagInt(p, 'port', 0, 65535) ?? (io.env.PORT ? Number(io.env.PORT) : undefined)
  if (port !== undefined && Number.isInteger(port)) config.server.port = port
  const workers = flagInt(p, 'workers', 1, 64) ?? config.server.workers
  const child = p.flags['worker-child'] === true
  if (!io.env.BUN_CONFIG_MAX_HTTP_REQUESTS && !child) {
    return superviseWithEnv({ BUN_CONFIG_MAX_HTTP_REQUESTS: String(config.server.maxUpstreamConnections) })
  }
  // Started by the supervisor, or as a worker: stop when the process that started us does.
  if (io.env.SWITCHYARD_SUPERVISED === '1' || child) exitWithParent()

  const log = createLogger(config.logging.level)
  const store = await openStores(config, { warn: (m, f) => log.warn(m, f) })
  // A database file deleted or replaced under a running gateway: exit non-zero so the service
  // manager notices, rather than keep serving from a file no other process can see.
  const running = startServer(config, buildDeps(config, { store, log }), workers > 1 || child, {
    onFatal: (detail) => {
      io.err(`switchyard: ${detail}; exiting`)
      process.exit(3)
    },
  })
  const info = {
    url: running.url,
    port: running.port,
    pid: process.pid,
    workers,
    database: describeDatabase(config),
  }
  const children: Worker[] = []
  if (child) {
    io.out(JSON.stringify(info))
  } else {
    for (let i = 1; i < workers; i++) children.push(spawnWorker(p, running.port))
    // Announce only once every worker is listening.
    await Promise.all(children.map((c) => c.ready))
    const plural = workers > 1 ? 's' : ''
    io.out(
      p.flags.json === true
        ? JSON.stringify(info)
        : `Switchyard listening on ${running.url} (${workers} worker${plural}, database ${describeDatabase(config)})`,
    )
  }
  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    for (const c of children) c.proc.kill('SIGTERM')
    await running.stop()
    await Promise.all(children.map((c) => c.proc.exited))
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  await new Promise(() => {})
  return 0
}

interface Worker {
  proc: ReturnType<typeof Bun.spawn<'pipe', 'pipe', 'inherit'>>
  ready: Promise<void>
}

function spawnWorker(p: Parsed, port: number): Worker {
  const self = selfCommand()
  const args = ['serve', '--worker-child', '--port', String(port)]
  for (const f of ['config', 'db', 'host']) {
    const v = flagString(p, f)
    if (v) args.push(`--${f}`, v)
  }
  const proc = Bun.spawn([...self, ...args], { stdout: 'pipe', stderr: 'inherit', stdin: 'pipe' })
  const ready = (async () => {
    const reader = proc.stdout.getReader()
    const { done } = await reader.read()
    reader.releaseLock()
    if (done) throw new Error(`worker exited before listening (exit code ${await proc.exited})`)
  })()
  return { proc, ready }
}
