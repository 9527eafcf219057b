/**
 * @module
 * What the pipeline needs from the app that runs it, and no more: the app's own `Deps` (server/)
 * is wider and satisfies this structurally. A store consumer here takes the part it uses.
 */
import type { AuthDeps } from '../auth/authenticate.ts'
import type { Catalogue } from '../catalogue/routing.ts'
import type { Resilience } from '../providers/resilience/index.ts'
import type { ProviderAdapter } from '../providers/types.ts'
import type { Limiter } from '../store/index.ts'
import type { Tracer } from '../telemetry/index.ts'
import type { Metrics } from '../traffic/metrics.ts'
import type { Traffic } from '../traffic/traffic.ts'
import type { UsageRecorder } from '../usage/recorder.ts'
import type { Logger } from '../util/log.ts'

export interface PipelineDeps extends AuthDeps {
  /** Admission and the suspension count (the backend behind it may be SQLite, PostgreSQL or Redis). */
  store: AuthDeps['store'] & Pick<Limiter, 'admit' | 'countRejection' | 'extend' | 'windows' | 'rowStates'>
  log: Logger
  recorder: UsageRecorder
  metrics: Metrics
  /** Requests in flight: access log, request metrics, graceful shutdown. */
  traffic: Traffic
  catalogue: Catalogue
  /** Adapter per provider prefix. */
  adapters: Map<string, ProviderAdapter>
  /** Key pools, retry and circuit policies, circuits: what the attempt loop consults (DESIGN §10). */
  resilience: Resilience
  /** OpenTelemetry traces; null when telemetry is off (the request path then does nothing for it). */
  tracer: Tracer | null
}
