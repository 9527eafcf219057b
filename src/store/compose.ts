/**
 * @module
 * One store from one part per concern, for every backend: SQLite's parts (sqlite/index.ts) and
 * PostgreSQL's (postgres/index.ts), with Redis's limiter in place of the database's (open.ts).
 * The parts are listed here once, each with the methods it answers; the three calls that span
 * parts (settling, sweeping, retention) are written here once for every backend.
 * @example
 * const store = composeStore({ accounts, limiter, usage, history, alerts }, { health, close })
 */
import type { AlertStore } from './alert-types.ts'
import type { StoreHealth } from './errors.ts'
import type {
  AccountStore,
  HistoryStore,
  Limiter,
  OverviewStore,
  SessionAdminStore,
  Store,
  UsageStore,
} from './types.ts'

/** The parts, one per concern; the backend closes them (`StoreBackend.close`). */
export interface StoreParts {
  accounts: Omit<AccountStore, 'close'>
  limiter: Omit<Limiter, 'close'>
  usage: Omit<UsageStore, 'close'>
  history: HistoryStore & OverviewStore & SessionAdminStore
  alerts: AlertStore
}

/** What the backend adds to its parts: its health, its close, and a wrapper around every call. */
export interface StoreBackend {
  health(): StoreHealth
  close(): void | Promise<void>
  /** Runs every call of the composed store (PostgreSQL: `failureMemo`); none = the part's own. */
  call?<T>(run: () => Promise<T>): Promise<T>
}

/** The methods a part answers alone, with a type check that none of the interface's is missing. */
const listing =
  <T>() =>
  <const K extends readonly (keyof T)[]>(
    k: K & ([Exclude<keyof T, K[number]>] extends [never] ? unknown : never),
  ) =>
    k

/** Spanning parts (composed below), or the backend's own. */
type Composed = 'close' | 'complete' | 'sweepReservations' | 'settle' | 'reconcile' | 'pruneHistory'
type Own<T> = Omit<T, Composed>

const PARTS = {
  accounts: listing<Own<AccountStore>>()([
    'createAccount',
    'getAccount',
    'listAccounts',
    'setAccountPlan',
    'setAccountEnabled',
    'planHistory',
    'createKey',
    'setKeyLimits',
    'findKeyByHash',
    'getKey',
    'listKeys',
    'setKeyState',
    'rotateKey',
    'setKeySuspended',
    'authGeneration',
  ]),
  limiter: listing<Own<Limiter>>()(['admit', 'countRejection', 'extend', 'windows', 'rowStates']),
  usage: listing<Own<UsageStore>>()(['usageSummary']),
  history: listing<Own<HistoryStore & OverviewStore & SessionAdminStore>>()([
    'requestLog',
    'requestById',
    'usageSeries',
    'recordRateLimited',
    'recordRefusals',
    'refusals',
    'topOfDay',
    'recentOutcomes',
    'createSession',
    'getSession',
    'deleteSession',
    'listSessions',
    'endSessions',
  ]),
  alerts: listing<AlertStore>()([
    'enqueueAlert',
    'claimDeliveries',
    'deliveryTried',
    'listDeliveries',
    'pruneAlerts',
  ]),
} satisfies { [P in keyof StoreParts]: readonly (keyof StoreParts[P])[] }

type Method = (...args: unknown[]) => Promise<unknown>

/** The store of these parts; `extra` adds what a backend's tests read (SQLite's `db`). */
export function composeStore<X extends object = object>(
  parts: StoreParts,
  backend: StoreBackend,
  extra?: X,
): Store & X {
  const call = backend.call?.bind(backend)
  const out: Record<string, unknown> = {}
  const add = (name: string, fn: Method) => {
    out[name] = call ? (...args: unknown[]) => call(() => fn(...args)) : fn
  }
  for (const [part, names] of Object.entries(PARTS) as [keyof StoreParts, readonly string[]][]) {
    const p = parts[part] as unknown as Record<string, Method>
    for (const name of names) add(name, p[name]!.bind(p))
  }
  const { limiter, usage, history, alerts } = parts
  const spanning: Pick<Store, 'complete' | 'sweepReservations' | 'pruneHistory'> = {
    complete: async (batch) => {
      await usage.complete(batch)
      // A limiter outside the database settles after the outcomes are in (Redis).
      if (limiter.settle) await limiter.settle(batch.flatMap((c) => (c.settlement ? [c.settlement] : [])))
    },
    sweepReservations: async (before) => {
      const swept = await limiter.sweepReservations(before)
      // Redis's own reservations the database settled, or never admitted (RedisLimiter.reconcile).
      return swept + ((await limiter.reconcile?.(before)) ?? 0)
    },
    // The alert queue's finished rows go with the hourly rollups (alert-types.ts).
    pruneHistory: async (p) =>
      (await history.pruneHistory(p)) + (await alerts.pruneAlerts(p.hourlyBefore, p.chunk)),
  }
  for (const [name, fn] of Object.entries(spanning)) add(name, fn as Method)
  out.health = () => backend.health()
  out.close = () => backend.close()
  return Object.assign(out, extra) as unknown as Store & X
}

/**
 * Engine failures that no retry of the request can fix, mapped once (`unavailable`) and
 * remembered for `/healthz` until a call succeeds (a networked engine: PostgreSQL).
 */
export function failureMemo(
  unavailable: (err: unknown) => (Error & { reason: StoreHealth['reason'] }) | null,
): Pick<StoreBackend, 'health' | 'call'> {
  let failure: StoreHealth | null = null
  return {
    health: () => failure ?? { ok: true },
    async call<T>(run: () => Promise<T>): Promise<T> {
      try {
        const v = await run()
        failure = null
        return v
      } catch (err) {
        const u = unavailable(err)
        if (!u) throw err
        failure = { ok: false, reason: u.reason, detail: u.message }
        throw u
      }
    },
  }
}
