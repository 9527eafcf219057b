/**
 * @module
 * Builds a gateway's parts from a config. Tests call this with a temporary database path and
 * a `ManualClock`; `serve` calls it once per process, and `rebuildDeps` at each live reload.
 */
import { AccountService } from '../accounts/service.ts'
import { AlertService } from '../alerts/index.ts'
import { AuthCache } from '../auth/cache.ts'
import { type AuthInvalidatingStore, authInvalidating } from '../auth/invalidating-store.ts'
import { AuthThrottle } from '../auth/throttle.ts'
import { Catalogue } from '../catalogue/routing.ts'
import type { Config } from '../config/index.ts'
import { loadTable } from '../limits/o200k-bpe.ts'
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
  // The o200k table (count_tokens on any plan, a token or money limit's counts), read and checked
  // here, before the port opens (milliseconds): a bundle without it, or with a damaged one, fails
  // at start with the file's name, not with a 500 on the first count.
  loadTable()
  const clock = opts.clock ?? systemClock
  const log = opts.log ?? createLogger(config.logging.level)
  if (!opts.store && config.database.url)
    throw new Error('a PostgreSQL store is opened with openStores(config) and passed in as opts.store')
  const backend = opts.store ?? openSqliteFromConfig(config, { now: clock.now() })
  const authCache = new AuthCache(backend)
  const metrics = new Metrics()
  const store = authInvalidating(backend, authCache)
  const lasting: Lasting = {
    store,
    authCache,
    clock,
    log,
    metrics,
    recorder: new UsageRecorder(store, config.usage.flushMs, log),
    traffic: new Traffic(metrics, log, config.logging.access),
    authThrottle: new AuthThrottle(clock),
    tracer: createTracer(config.telemetry, log, VERSION),
    // Replaced by startServer; an app served some other way (a test's `app.handle`) refuses plainly.
    reloads: {
      token: null,
      run: async () => ({
        outcome: 'refused',
        generation: 1,
        changed: { sections: [], entries: {} },
        problems: [
          { path: '/', message: 'this gateway was not started by startServer: it has no file to reload' },
        ],
        restart: false,
        source: config.source,
      }),
    },
  }
  return configParts(config, lasting)
}

/**
 * The parts of a running gateway that outlive a reload: the store (and the auth cache in front of
 * it, which holds records, never a plan's limits: those are read from the config per request),
 * the usage recorder, metrics and requests in flight, the admin throttle, the tracer. The settings
 * they were built from are the start-only ones (app/config-changes.ts).
 */
type Lasting = Pick<
  Deps,
  'authCache' | 'clock' | 'log' | 'metrics' | 'recorder' | 'traffic' | 'authThrottle' | 'tracer' | 'reloads'
> & { store: AuthInvalidatingStore }

/**
 * A reload's new generation: everything built from the config anew (plans and accounts service,
 * catalogue, providers, key pools, circuits, alerts), on the lasting parts of `running`. A
 * provider configured exactly as before keeps its key rests and circuits (an upstream that is
 * down stays skipped); a changed one starts afresh (closed, none resting): the change is most
 * often the operator's fix to it, and one still failing opens its circuit again.
 */
export function rebuildDeps(running: Deps, config: Config): Deps {
  const { authCache, clock, log, metrics, recorder, traffic, authThrottle, tracer, reloads } = running
  // buildDeps made it (the first generation): every later one hands it on.
  const store = running.store as AuthInvalidatingStore
  return configParts(
    config,
    { store, authCache, clock, log, metrics, recorder, traffic, authThrottle, tracer, reloads },
    running.resilience,
  )
}

function configParts(config: Config, lasting: Lasting, previous?: Resilience): Deps {
  const { store, clock, log, metrics, recorder } = lasting
  const adapters = createAdapters(config.providers)
  const resilience = new Resilience(config.providers, adapters, undefined, previous)
  metrics.circuits = () => resilience.board.states()
  const alerts = new AlertService({ store, config, clock, log })
  // Nothing is hooked when no webhook takes the event: the request path pays nothing.
  if (alerts.alerts.wants('circuit.opened') || alerts.alerts.wants('circuit.closed'))
    resilience.board.onChange = (target, state) => alerts.circuitChanged(target, state)
  // A reload that reset open circuits closed them: the receiver that was told they opened is told so.
  for (const target of resilience.reset) alerts.circuitChanged(target, 'closed', 'reload')
  store.onSuspended = alerts.alerts.wants('key.suspended')
    ? (key, until) => alerts.keySuspended(key, until)
    : null
  recorder.onWritten = alerts.thresholds.active
    ? (batch) => void alerts.thresholds.written(batch, () => clock.now())
    : null
  return {
    ...lasting,
    config,
    accounts: new AccountService(store, config, clock),
    alerts,
    catalogue: new Catalogue(config.providers, config.aliases),
    adapters,
    resilience,
  }
}
