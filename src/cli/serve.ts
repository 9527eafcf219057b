/**
 * @module
 * `switchyard serve [--host H] [--port P] [--workers N]`. With N > 1 this process serves too and
 * starts N-1 more on the same port (SO_REUSEPORT); all share the database. Any start-up failure
 * (bad config, port taken, a worker that cannot start) ends every process with a non-zero exit;
 * SIGTERM / SIGINT drain gracefully and exit 0, a second one stops at once (130 / 143,
 * `signals.ts`). A worker that dies later is restarted (`workers.ts`); one that keeps dying as
 * soon as it starts drains the rest and exits 1.
 */

import { createLogger } from '../util/log.ts'
import { flagInt, type Parsed } from './args.ts'
import { checkCommand, configPath, hostSetting, intSetting, loadConfig } from './context.ts'
import type { Io } from './io.ts'
import { superviseWithEnv } from './process.ts'

export async function serveCommand(p: Parsed, io: Io): Promise<number> {
  checkCommand(p, {
    usage: 'serve [--host H] [--port P] [--workers N]',
    words: 1,
    flags: ['host', 'port', 'workers', 'worker-child', 'worker-port'],
  })
  const port = intSetting(p, io, 'port', 'PORT', 0, 65535)
  const workersFlag = flagInt(p, 'workers', 1, 64)
  const { host, from: hostFrom } = hostSetting(p, io, configPath(p, io))
  const config = await loadConfig(p, io)
  if (host) config.server.host = host
  if (port !== undefined) config.server.port = port
  const workers = workersFlag ?? config.server.workers
  const child = p.flags['worker-child'] === true
  if (!io.env.BUN_CONFIG_MAX_HTTP_REQUESTS && !child) {
    const code = await superviseWithEnv(
      { BUN_CONFIG_MAX_HTTP_REQUESTS: String(config.server.maxUpstreamConnections) },
      createLogger(config.logging.level),
    )
    process.exit(code)
  }
  // The supervisor above only starts this command again: it loads none of the server (~0.2 s of
  // CPU at every `serve`), which only the process that serves needs (serving.ts).
  const { serveHere } = await import('./serving.ts')
  return await serveHere(p, io, { config, host, hostFrom, port, workersFlag, workers, child })
}
