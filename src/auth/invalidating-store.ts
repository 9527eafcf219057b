/**
 * @module
 * The store as this process's gateway uses it: the backend itself, but for the parts whose
 * writes can change an authentication answer — the accounts part's writes to keys and plans,
 * and the limiter's refusals that suspend a key — which drop the authentication cache once they
 * have committed. So a change made here (admin API, console, an admission that suspends a key, a
 * plan downgraded at expiry) applies to this process's very next request. Changes made elsewhere
 * reach the cache through the store's generation counter (cache.ts).
 */
import type { AccountStore, Store } from '../store/index.ts'
import type { AuthCache } from './cache.ts'

/**
 * The accounts part's writes that change what `findKeyByHash` answers (a new key may be a hash
 * the cache remembers as unknown; a key's limits ride with authentication's answer). Reads,
 * `findKeyByHash` itself included, go to the backend uncached.
 */
const AUTH_WRITES = [
  'createKey',
  'setKeyState',
  'rotateKey',
  'setKeySuspended',
  'setKeyLimits',
  'setAccountPlan',
  'setAccountEnabled',
] as const satisfies readonly (keyof AccountStore)[]

export type AuthInvalidatingStore = Store & {
  /** The backend itself (tests read its database directly). */
  readonly inner: Store
  /** A key was suspended by a refusal through this store (the `key.suspended` alert). */
  onSuspended: ((keyId: string, until: number) => void) | null
}

/**
 * `inner` with the writes above, and the limiter's refusals, dropping `cache`. Every other call
 * is `inner`'s own (looked up through the prototype: nothing forwards it).
 * @example
 * const store = authInvalidating(backend, new AuthCache(backend))
 */
export function authInvalidating(inner: Store, cache: AuthCache): AuthInvalidatingStore {
  const store: AuthInvalidatingStore = Object.create(inner)
  Object.assign(store, { inner, onSuspended: null })
  const writes = inner as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
  for (const name of AUTH_WRITES) {
    // The cache drops whatever the outcome: a failed write may still have committed.
    ;(store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) =>
      writes[name]!(...args).finally(() => cache.invalidate())
  }
  const suspended = (keyId: string, until: number) => {
    cache.invalidate()
    store.onSuspended?.(keyId, until)
  }
  // A refusal may suspend the key (the backend writes it in the same step).
  store.admit = (i) =>
    inner.admit(i).then((r) => {
      if (!r.admitted && r.suspendedUntil !== null) suspended(i.keyId, r.suspendedUntil)
      return r
    })
  store.countRejection = (r) =>
    inner.countRejection(r).then((until) => {
      if (until !== null) suspended(r.keyId, until)
      return until
    })
  return store
}
