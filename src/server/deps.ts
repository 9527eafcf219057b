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
import type { ConfigProblem } from '../config/index.ts'
import type { PipelineDeps } from '../pipeline/deps.ts'
import type { Store } from '../store/index.ts'

export interface Deps extends PipelineDeps {
  /** The backend, wrapped so that writes through it drop `authCache` (auth/invalidating-store.ts). */
  store: Store
  accounts: AccountService
  /**
   * Failed authentications per client address: the admin token (every group using `adminGuard`,
   * the console's sign-in) and the metrics token alike.
   */
  authThrottle: AuthThrottle
  /** Webhook alerts: their events, queue and sender (DESIGN §15). */
  alerts: AlertService
  /**
   * Live reload (app/reload.ts): one object per process, the same in every generation of the parts
   * built from the config. `serve` sets `run` (with `--workers`, to reach the other processes too);
   * until then, and where the gateway was built without a file, it refuses.
   */
  reloads: ReloadControl
}

export interface ReloadControl {
  run(): Promise<ReloadReport>
  /**
   * The serve file's credential (cli/serve-file.ts), set by `serve`: `POST /admin/v1/reload`
   * takes it beside the admin token (the `switchyard reload` of this machine). Null: none.
   */
  token: string | null
}

/** What one reload did, in the process that was asked. */
export interface ReloadReport {
  /** `unchanged`: the file is valid and resolves to the running config. */
  outcome: 'applied' | 'unchanged' | 'refused'
  /** Counts the configs this process has served, from 1 at start; moves on `applied`. */
  generation: number
  /**
   * What changed, by the file's names (app/config-changes.ts): its top-level sections, and under
   * each its settings changed (`server`: `cors_origins`) or its entries by name (plans, providers,
   * aliases: added, removed, changed).
   */
  changed: {
    sections: string[]
    entries: Record<string, { added: string[]; removed: string[]; changed: string[] }>
  }
  /** Why it was refused, each with its path in the file (the messages `config check` prints). */
  problems: ConfigProblem[]
  /** Refused only because a start-only setting changed: a restart applies the file. */
  restart: boolean
  /** The config file read. */
  source: string
  /** With `--workers N`: each other process, which reloaded its own copy of the file, and how. */
  others?: Array<{ pid: number; outcome: string }>
}

/** A reload's audit `change`, the same whichever way it came (the admin route, SIGHUP). */
export function reloadAuditChange(r: ReloadReport): Record<string, unknown> {
  return {
    outcome: r.outcome,
    generation: r.generation,
    sections: r.changed.sections,
    ...r.changed.entries,
    ...(r.problems.length ? { problems: r.problems.map((p) => p.path) } : {}),
    ...(r.others ? { others: r.others } : {}),
  }
}
