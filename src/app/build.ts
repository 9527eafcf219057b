/**
 * @module
 * Builds a gateway's parts from a config. Tests call this with a temporary database path and
 * a `ManualClock`; `serve` calls it once per process.
 */
import { AccountService } from '../accounts/service.ts'
import { AlertService } from '../alerts/index.ts'
import { AuthCache } from '../auth/cache.ts'
import { authInvalidating } from '../auth/invalidating-store.ts'
import { AuthThrottle } from '../auth/throttle.ts'
import { Catalogue } from '../catalogue/routing.ts'
import type { Config } from '../config/index.ts'
import { createAdapters } from '../providers/index.ts'
import { Resilience } from '../providers/resilience/index.ts'
import type { Deps } from '../server/deps.ts'
import type { Store } from '../store/index.ts'
import { openSqliteFromConfig } from '../store/open.ts'
import { createTracer } from '../telemetry/index.ts'
import { Metrics } from '../traffic/metrics.ts'
import { Traffic } from '../traffic/traffic.ts'
import { UsageRecorder } from '../usage/recorder.ts'
import { type Clock, systemClock } from '../util/clock.ts'
import { createLogger, type Logger } from '../util/log.ts'
import { VERSION } from '../version.ts'

export function buildDeps(config: Config, opts: { clock?: Clock; log?: Logger; store?: Store } = {}): Deps {
  const clock = opts.clock ?? systemClock
  const log = opts.log ?? createLogger(config.logging.level)
  if (!opts.store && config.database.url)
    throw new Error('a PostgreSQL store is opened with openStores(config) and passed in as opts.store')
  const backend = opts.store ?? openSqliteFromConfig(config, clock.now())
  const authCache = new AuthCache(backend)
  const store = authInvalidating(backend, authCache)
  const metrics = new Metrics()
  const adapters = createAdapters(config.providers)
  const resilience = new Resilience(config.providers, adapters)
  metrics.circuits = () => resilience.board.states()
  const recorder = new UsageRecorder(store, config.usage.flushMs, log)
  const alerts = new AlertService({ store, config, clock, log })
  // Nothing is hooked when no webhook takes the event: the request path pays nothing.
  if (alerts.alerts.wants('circuit.opened') || alerts.alerts.wants('circuit.closed'))
    resilience.board.onChange = (target, state) => alerts.circuitChanged(target, state)
  if (alerts.alerts.wants('key.suspended'))
    store.onSuspended = (key, until) => alerts.keySuspended(key, until)
  if (alerts.thresholds.active)
    recorder.onWritten = (batch) => void alerts.thresholds.written(batch, () => clock.now())
  return {
    config,
    store,
    authCache,
    clock,
    log,
    accounts: new AccountService(store, config, clock),
    recorder,
    alerts,
    metrics,
    traffic: new Traffic(metrics, log, config.logging.access),
    catalogue: new Catalogue(config.providers, config.aliases),
    adapters,
    resilience,
    adminThrottle: new AuthThrottle(clock),
    tracer: createTracer(config.telemetry, log, VERSION),
  }
}
