/**
 * @module
 * Runs the gateway: one process, or `workers` processes on one port (SO_REUSEPORT) that share
 * the database — the limiter's write transaction keeps limits exact across them. A live reload
 * (`reload.ts`) swaps the generation of parts built from the config under the same socket.
 */
import { type Config, loadConfigFile } from '../config/index.ts'
import { letGoUnread } from '../pipeline/body.ts'
import type { Deps, ReloadReport } from '../server/deps.ts'
import { pruneAll, retentionPolicy } from '../usage/retention.ts'
import { type App, createApp } from './app.ts'
import { buildDeps, rebuildDeps } from './build.ts'
import { Reloader, reloadAlert } from './reload.ts'

const HOUR_MS = 3_600_000
/** After the drain, how long the last bytes of finished responses get to leave before sockets close. */
const FLUSH_GRACE_MS = 1_000
/** How often the store is checked for a condition that ends this process (database file lost). */
const WATCH_MS = 1_000

export interface ServeHooks {
  /**
   * The store can no longer serve from this process (its database file was deleted or replaced).
   * `switchyard serve` exits non-zero here; without a hook the gateway only reports unhealthy.
   */
  onFatal?: (detail: string) => void
  /**
   * Reads the config again for a live reload, with whatever the caller applied at start (`serve`:
   * its flags and environment). Default: the file `config.source` names; none when it names none.
   */
  load?: () => Promise<Config>
  /**
   * Where to listen instead of `config.server.port`: a `--workers` worker's, the port its primary
   * chose. The config keeps the port as the file and flags say it, as the primary's does, so a
   * reload compares the file with that (a changed `server.port` is refused the same everywhere).
   */
  listenPort?: number
}

export interface Running {
  port: number
  url: string
  /** The current generation's parts (a live reload replaces them; the lasting ones stay the same objects). */
  readonly deps: Deps
  /** Live reload in this process only (`deps.reloads.run` is what `serve` widens to its workers). */
  reload(): Promise<ReloadReport>
  /**
   * Queues the `reload.applied` / `reload.refused` webhook of a reload this process was asked for,
   * on the current generation's alerts (an applied file's own webhooks). Once per reload: `serve`
   * calls it where the reload was asked, never in the processes it had reload too.
   */
  announce(r: ReloadReport): void
  /** Stops at once: connections closed, usage flushed (one try), store closed. */
  stop(): Promise<void>
  /**
   * Graceful shutdown: new requests get 503 `shutting_down`, those in flight get up to
   * `server.drain_timeout_s`, streams still open then end with a `shutting_down` error event;
   * then usage is flushed — retried for up to `server.drain_timeout_s` more while the store is
   * busy or unavailable (`UsageRecorder.close`) — and the store closed.
   */
  drain(): Promise<void>
}

/** What a request runs on, from its first byte to its last: swapped whole by a reload. */
interface Generation {
  config: Config
  deps: Deps
  app: App
}

export function startServer(
  config: Config,
  deps: Deps = buildDeps(config),
  reusePort = false,
  hooks: ServeHooks = {},
): Running {
  let gen: Generation = { config, deps, app: createApp(deps) }
  // Bun's own server, not Elysia's `listen`: its fetch takes each request to the generation
  // current when it arrives (Elysia's listen would also hand its routes to Bun's router, bound to
  // the first app for good). Options as Elysia's listen passed them.
  const server = Bun.serve({
    hostname: config.server.host,
    port: hooks.listenPort ?? config.server.port,
    idleTimeout: config.server.idleTimeoutS,
    // Bun refuses a declared body over its own limit before the app runs, with a bare 413 (no
    // error body, no x-request-id), so it is given none: every route that reads a body bounds it
    // itself, on declared and chunked bodies, before reading past the bound — the model surfaces
    // at server.body_limit_bytes (pipeline/body.ts), the admin API and the console's sign-in and
    // sign-out at their own few KB (server/json-body.ts), in the parse hook of their route group.
    // A new route that reads a body needs one of the two (test/e2e/server/body-bounds.test.ts).
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    reusePort,
    // Never Bun's development mode: its error pages would show a client the gateway's source.
    development: false,
    // Every answer leaves here: one sent before the request's body was read closes the connection.
    fetch: (request) => {
      const answer = gen.app.fetch(request)
      return answer instanceof Promise
        ? answer.then((res) => letGoUnread(request, res))
        : letGoUnread(request, answer)
    },
  })
  gen.app.server = server
  const stopping = new AbortController()
  const prune = () => {
    pruneAll(deps.store, retentionPolicy(gen.config, deps.clock.now()), stopping.signal).catch((err) =>
      deps.log.warn('prune failed', { error: (err as Error).message }),
    )
  }
  prune()
  const pruneTimer = setInterval(prune, HOUR_MS)
  pruneTimer.unref?.()
  // Reservations a killed process never settled: released once `reservation_ttl_s` has passed,
  // checked every tenth of it (at most a minute), so none is held past 1.1 × the TTL.
  const ttl = config.limiter.reservationTtlMs
  const sweep = () => {
    deps.store
      .sweepReservations(deps.clock.now() - ttl)
      .catch((err) => deps.log.warn('reservation sweep failed', { error: (err as Error).message }))
  }
  const sweepTimer = setInterval(sweep, Math.min(60_000, Math.ceil(ttl / 10)))
  sweepTimer.unref?.()
  let fatal = false
  const idle = idleCollector(deps.traffic)
  const watchTimer = setInterval(() => {
    idle()
    const h = deps.store.health()
    if (!h.fatal || fatal) return
    fatal = true
    deps.log.error('store lost', { reason: h.reason, detail: h.detail })
    hooks.onFatal?.(h.detail ?? 'store lost')
  }, WATCH_MS)
  watchTimer.unref?.()
  deps.alerts.start()
  const load = hooks.load ?? (config.source ? () => loadConfigFile(config.source) : null)
  /** Reloads' old generations' alert senders still finishing their sends (see `apply`). */
  const retiring = new Set<Promise<void>>()
  const reloader = new Reloader({
    load:
      load ??
      (() => Promise.reject(new Error('this gateway was started without a config file: nothing to reload'))),
    current: () => gen.config,
    apply(next) {
      const before = gen
      const nextDeps = rebuildDeps(before.deps, next)
      const app = createApp(nextDeps)
      app.server = server
      // Compiled before the swap: the first request on it pays nothing.
      app.compile()
      gen = { config: next, deps: nextDeps, app }
      nextDeps.alerts.start()
      // Events of requests still running on `before` go to the store's queue: the new sender sends
      // them. The old sender finishes the sends it has under way (bounded by their timeout): cut,
      // a delivery its receiver had read was sent again by the new one, twice under one id.
      const finishing = before.deps.alerts.stop({ finish: true })
      retiring.add(finishing)
      void finishing.finally(() => retiring.delete(finishing))
    },
    log: deps.log,
  })
  const announce = (r: ReloadReport) => {
    const alert = reloadAlert(r)
    const alerts = gen.deps.alerts.alerts
    if (alert && alerts.wants(alert.event)) alerts.emit(alert.event, alert.data)
  }
  deps.reloads.run = async () => {
    const r = await reloader.run()
    announce(r)
    return r
  }
  let stopped: Promise<void> | null = null
  /**
   * `graceMs`: time for responses already complete in the app to reach their sockets;
   * `flushWindowMs`: how long the last usage flush is retried while the store does not take it;
   * `graceful` (a drain): every alert sender — the current one and a reload's old ones still
   * finishing — gets the answers of its sends under way (each bounded by its send timeout) and
   * records them before the store closes, so each is sent once. Otherwise the sends are cut and
   * their rows are due again when their lease ends (at least once).
   */
  const stop = (graceMs = 0, flushWindowMs = 0, graceful = false) => {
    stopped ??= (async () => {
      clearInterval(pruneTimer)
      clearInterval(sweepTimer)
      clearInterval(watchTimer)
      if (graceMs > 0) await Promise.race([server.stop(false), Bun.sleep(graceMs)])
      await server.stop(true)
      await deps.recorder.close(flushWindowMs)
      await Promise.all([gen.deps.alerts.stop({ finish: graceful }), ...(graceful ? retiring : [])])
      // The spans of the last requests, given a moment: a collector that is away delays no exit.
      if (deps.tracer) await Promise.race([deps.tracer.close(), Bun.sleep(2_000)])
      await deps.store.close()
    })()
    return stopped
  }
  return {
    port: server.port!,
    url: `http://${hostInUrl(config.server.host)}:${server.port}`,
    get deps() {
      return gen.deps
    },
    reload: () => reloader.run(),
    announce,
    stop: () => stop(),
    async drain() {
      const timeoutS = gen.config.server.drainTimeoutS
      deps.log.info('shutting down', { drain_timeout_s: timeoutS, pid: process.pid })
      const r = await deps.traffic.drain(timeoutS * 1000)
      // The outcomes of the streams the deadline cut were recorded at its end: they get a window
      // as long as the drain's to reach a store that is busy (another process's write) or away.
      await stop(FLUSH_GRACE_MS, timeoutS * 1000, true)
      deps.log.info('stopped', { in_flight: r.inFlight, cut_at_deadline: r.cut, pid: process.pid })
    },
  }
}

/** An IPv6 address is bracketed in a URL, once: `[::1]` (as written in URLs, and listened on) stays. */
function hostInUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
}

/**
 * After a burst, memory goes back once the gateway is idle: one full collection when no request
 * began for a whole watch interval and none is open (JSC otherwise keeps the heap a burst grew, ≈
 * 15–20 MB of RSS). Never under traffic: a full collection pauses the event loop for milliseconds.
 */
export function idleCollector(
  traffic: Pick<Deps['traffic'], 'begun' | 'inFlight'>,
  collect: () => void = () => Bun.gc(true),
): () => void {
  let seen = -1
  let collected = true
  return () => {
    const begun = traffic.begun
    if (begun !== seen) {
      seen = begun
      collected = false
    } else if (!collected && traffic.inFlight === 0) {
      collected = true
      collect()
    }
  }
}
