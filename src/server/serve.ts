/**
 * @module
 * Runs the gateway: one process, or `workers` processes on one port (SO_REUSEPORT) that share
 * the database — the limiter's write transaction keeps limits exact across them.
 */
import type { Config } from '../config/index.ts'
import { createApp } from './app.ts'
import { buildDeps } from './build.ts'
import type { Deps } from './deps.ts'

const HOUR_MS = 3_600_000

export interface Running {
  port: number
  url: string
  deps: Deps
  stop(): Promise<void>
}

export function startServer(config: Config, deps: Deps = buildDeps(config), reusePort = false): Running {
  const app = createApp(deps)
  app.listen({
    hostname: config.server.host,
    port: config.server.port,
    idleTimeout: config.server.idleTimeoutS,
    // The gateway enforces its own limit (413 in OpenAI's shape); Bun's is a backstop.
    maxRequestBodySize: config.server.bodyLimitBytes * 2 + 65_536,
    reusePort,
  })
  const server = app.server!
  const prune = () => {
    const now = deps.clock.now()
    deps.store
      .prune(now - config.usage.retentionDays * 86_400_000, now - config.suspension.windowMs)
      .catch((err) => deps.log.warn('prune failed', { error: (err as Error).message }))
  }
  prune()
  const pruneTimer = setInterval(prune, HOUR_MS)
  pruneTimer.unref?.()
  return {
    port: server.port!,
    url: `http://${config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host}:${server.port}`,
    deps,
    async stop() {
      clearInterval(pruneTimer)
      await app.stop(true)
      await deps.recorder.flush()
      deps.store.close()
    },
  }
}
