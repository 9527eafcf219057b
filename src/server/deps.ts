/**
 * @module
 * Everything a gateway instance is built from. Built once at start-up and passed in, so a test
 * can build an app with a temporary database, a manual clock and a mock upstream.
 */
import type { AccountService } from '../accounts/service.ts'
import type { AuthCache } from '../auth/cache.ts'
import type { Config } from '../config/index.ts'
import type { Catalogue } from '../catalogue/routing.ts'
import type { ProviderAdapter } from '../providers/types.ts'
import type { Store } from '../store/index.ts'
import type { UsageRecorder } from '../usage/recorder.ts'
import type { Clock } from '../util/clock.ts'
import type { Logger } from '../util/log.ts'
import type { AuthThrottle } from '../auth/throttle.ts'
import type { Metrics } from '../traffic/metrics.ts'
import type { Traffic } from '../traffic/traffic.ts'

export interface Deps {
  config: Config
  /** The backend, wrapped so that writes through it drop `authCache` (auth/invalidating-store.ts). */
  store: Store
  /** Keys and their accounts by key hash, for authentication (auth/cache.ts). */
  authCache: AuthCache
  clock: Clock
  log: Logger
  accounts: AccountService
  recorder: UsageRecorder
  metrics: Metrics
  /** Requests in flight: access log, request metrics, graceful shutdown. */
  traffic: Traffic
  catalogue: Catalogue
  /** Adapter per provider prefix. */
  adapters: Map<string, ProviderAdapter>
  /** Failed admin authentications per client address; shared by every group using `adminGuard`. */
  adminThrottle: AuthThrottle
}
