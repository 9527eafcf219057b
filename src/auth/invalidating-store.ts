/**
 * @module
 * The store as this process's gateway uses it: every call goes to the backend unchanged, and a
 * write that can change an authentication answer drops the authentication cache once it has
 * committed, so a change made here (admin API, console, an admission that suspends a key, a plan
 * downgraded at expiry) applies to this process's very next request. Changes made elsewhere
 * reach the cache through the store's generation counter (cache.ts).
 */
import type { Store } from '../store/index.ts'
import type { AuthCache } from './cache.ts'

export class AuthInvalidatingStore implements Store {
  /** A key was suspended by a refusal through this store (the `key.suspended` alert). */
  onSuspended: ((keyId: string, until: number) => void) | null = null

  constructor(
    /** The backend itself (tests read its database directly). */
    readonly inner: Store,
    private readonly cache: AuthCache,
  ) {}

  /** Runs a write, then drops the cache whatever the outcome (a failed write may still have committed). */
  private async changes<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write()
    } finally {
      this.cache.invalidate()
    }
  }

  health: Store['health'] = () => this.inner.health()
  close: Store['close'] = () => this.inner.close()

  createAccount: Store['createAccount'] = (a) => this.inner.createAccount(a)
  getAccount: Store['getAccount'] = (n) => this.inner.getAccount(n)
  listAccounts: Store['listAccounts'] = (p) => this.inner.listAccounts(p)
  setAccountPlan: Store['setAccountPlan'] = (id, c, e) =>
    this.changes(() => this.inner.setAccountPlan(id, c, e))
  setAccountEnabled: Store['setAccountEnabled'] = (id, e) =>
    this.changes(() => this.inner.setAccountEnabled(id, e))
  planHistory: Store['planHistory'] = (id) => this.inner.planHistory(id)
  // A new key may be a hash the cache remembers as unknown.
  createKey: Store['createKey'] = (k) => this.changes(() => this.inner.createKey(k))
  /** Uncached: the cache itself and callers that need the store's answer now. */
  findKeyByHash: Store['findKeyByHash'] = (h) => this.inner.findKeyByHash(h)
  getKey: Store['getKey'] = (id) => this.inner.getKey(id)
  listKeys: Store['listKeys'] = (a, p) => this.inner.listKeys(a, p)
  setKeyState: Store['setKeyState'] = (id, s) => this.changes(() => this.inner.setKeyState(id, s))
  rotateKey: Store['rotateKey'] = (id, h, p, n) => this.changes(() => this.inner.rotateKey(id, h, p, n))
  setKeySuspended: Store['setKeySuspended'] = (id, u) => this.changes(() => this.inner.setKeySuspended(id, u))
  // The key's limits ride with authentication's answer (admission reads them from it).
  setKeyLimits: Store['setKeyLimits'] = (id, l) => this.changes(() => this.inner.setKeyLimits(id, l))
  authGeneration: Store['authGeneration'] = () => this.inner.authGeneration()

  /** An admission refused for the limits may suspend the key (the backend writes it in the same step). */
  admit: Store['admit'] = (i) =>
    this.inner.admit(i).then((r) => {
      if (!r.admitted && r.suspendedUntil !== null) {
        this.cache.invalidate()
        this.onSuspended?.(i.keyId, r.suspendedUntil)
      }
      return r
    })
  countRejection: Store['countRejection'] = (r) =>
    this.inner.countRejection(r).then((until) => {
      if (until !== null) {
        this.cache.invalidate()
        this.onSuspended?.(r.keyId, until)
      }
      return until
    })
  extend: Store['extend'] = (q) => this.inner.extend(q)
  windows: Store['windows'] = (a, n, m, d) => this.inner.windows(a, n, m, d)
  rowStates: Store['rowStates'] = (q) => this.inner.rowStates(q)
  sweepReservations: Store['sweepReservations'] = (b) => this.inner.sweepReservations(b)

  complete: Store['complete'] = (b) => this.inner.complete(b)
  enqueueAlert: Store['enqueueAlert'] = (a) => this.inner.enqueueAlert(a)
  claimDeliveries: Store['claimDeliveries'] = (n, l, c) => this.inner.claimDeliveries(n, l, c)
  deliveryTried: Store['deliveryTried'] = (id, t) => this.inner.deliveryTried(id, t)
  listDeliveries: Store['listDeliveries'] = (q) => this.inner.listDeliveries(q)
  pruneAlerts: Store['pruneAlerts'] = (b, c) => this.inner.pruneAlerts(b, c)
  usageSummary: Store['usageSummary'] = (a, n, d) => this.inner.usageSummary(a, n, d)
  requestLog: Store['requestLog'] = (f) => this.inner.requestLog(f)
  requestById: Store['requestById'] = (id) => this.inner.requestById(id)
  usageSeries: Store['usageSeries'] = (q) => this.inner.usageSeries(q)
  topOfDay: Store['topOfDay'] = (q) => this.inner.topOfDay(q)
  recentOutcomes: Store['recentOutcomes'] = (q) => this.inner.recentOutcomes(q)
  recordRateLimited: Store['recordRateLimited'] = (b) => this.inner.recordRateLimited(b)
  recordRefusals: Store['recordRefusals'] = (b) => this.inner.recordRefusals(b)
  refusals: Store['refusals'] = (q) => this.inner.refusals(q)
  pruneHistory: Store['pruneHistory'] = (p) => this.inner.pruneHistory(p)
  createSession: Store['createSession'] = (h, s, n) => this.inner.createSession(h, s, n)
  getSession: Store['getSession'] = (h, n) => this.inner.getSession(h, n)
  deleteSession: Store['deleteSession'] = (h) => this.inner.deleteSession(h)
  listSessions: Store['listSessions'] = (n, l) => this.inner.listSessions(n, l)
  endSessions: Store['endSessions'] = (s) => this.inner.endSessions(s)
}
