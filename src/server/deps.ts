/**
 * @module
 * Everything a gateway instance is built from (app/build.ts builds it once at start-up and passes
 * it in, so a test can build an app with a temporary database, a manual clock and a mock
 * upstream). The pipeline's own narrower needs are `PipelineDeps`; this adds what the
 * controllers and guards use.
 */
import type { AccountService } from '../accounts/service.ts'
import type { AlertService } from '../alerts/index.ts'
import type { AuthThrottle } from '../auth/throttle.ts'
import type { PipelineDeps } from '../pipeline/deps.ts'
import type { Store } from '../store/index.ts'

export interface Deps extends PipelineDeps {
  /** The backend, wrapped so that writes through it drop `authCache` (auth/invalidating-store.ts). */
  store: Store
  accounts: AccountService
  /** Failed admin authentications per client address; shared by every group using `adminGuard`. */
  adminThrottle: AuthThrottle
  /** Webhook alerts: their events, queue and sender (DESIGN §15). */
  alerts: AlertService
}
