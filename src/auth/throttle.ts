/**
 * @module
 * Throttles failed credential attempts per client address: after `maxFailures` failures within
 * `windowMs` of the first one, the address's wrong credentials are refused as throttled until that
 * window ends. The caller checks the credential first: the right one is never throttled (a lock-out
 * of the right token let anyone sharing the operator's address lock the operator out).
 *
 * Memory is bounded: at most `maxClients` addresses are tracked. Windows are kept in the order
 * they started, so expired ones are dropped from the front in amortised O(1); when the map is
 * full of live windows the oldest is dropped (an attacker rotating that many addresses gets
 * `maxFailures` tries on each, and a 32-character token makes that worthless).
 *
 * One throttle serves every credential a client proves itself with by its address (the admin
 * token, the metrics token: `guard`), so wrong guesses at one count toward the other too.
 *
 * @example
 * const throttle = new AuthThrottle(clock)
 * throttle.guard(address, () => checkToken(header), (ms) => tooMany(ms))
 */
import type { Clock } from '../util/clock.ts'
import { GatewayError } from '../util/errors.ts'

export interface ThrottlePolicy {
  maxFailures: number
  windowMs: number
  maxClients: number
}

/** Five failures a minute per address; 10,000 addresses tracked (about 1 MB). */
export const ADMIN_THROTTLE: Readonly<ThrottlePolicy> = Object.freeze({
  maxFailures: 5,
  windowMs: 60_000,
  maxClients: 10_000,
})

interface Window {
  start: number
  failures: number
}

export class AuthThrottle {
  private readonly windows = new Map<string, Window>()

  constructor(
    private readonly clock: Clock,
    private readonly policy: ThrottlePolicy = ADMIN_THROTTLE,
  ) {}

  /** Milliseconds until `client` may try again; 0 when it may now. */
  blockedForMs(client: string): number {
    const w = this.windows.get(client)
    if (!w || w.failures < this.policy.maxFailures) return 0
    return Math.max(0, w.start + this.policy.windowMs - this.clock.now())
  }

  fail(client: string): void {
    const now = this.clock.now()
    let w = this.windows.get(client)
    if (w && now - w.start >= this.policy.windowMs) {
      this.windows.delete(client) // re-inserted below, at the back, in start order
      w = undefined
    }
    if (!w) {
      this.makeRoom(now)
      w = { start: now, failures: 0 }
      this.windows.set(client, w)
    }
    w.failures++
  }

  /**
   * Runs `check` on a credential from `address` (a client's IP: `clientKey` makes it the throttled
   * unit). The credential is checked first, so the right one always passes; a wrong one that
   * `counts` (a missing credential guesses nothing) counts toward the address, and once the address
   * is throttled is refused with `throttled(ms until it may try again)` instead of `check`'s own
   * refusal.
   */
  guard(
    address: string,
    check: () => void,
    throttled: (ms: number) => Error,
    counts: (refusal: unknown) => boolean = () => true,
  ): void {
    try {
      check()
    } catch (err) {
      if (counts(err)) {
        const from = clientKey(address)
        const wait = this.blockedForMs(from)
        if (wait > 0) throw throttled(wait)
        this.fail(from)
      }
      throw err
    }
  }

  /** Addresses tracked now (for tests and metrics). */
  get size(): number {
    return this.windows.size
  }

  private makeRoom(now: number): void {
    for (const [client, w] of this.windows) {
      if (now - w.start < this.policy.windowMs && this.windows.size < this.policy.maxClients) break
      this.windows.delete(client)
    }
  }
}

/**
 * The throttled unit for an address: IPv4 as is, IPv6 by its /64 (one host usually holds a whole
 * /64, so counting single v6 addresses would not throttle anyone), IPv4-mapped IPv6 as IPv4.
 */
export function clientKey(address: string): string {
  if (!address.includes(':')) return address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]!
  const [head = '', tail] = address.split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}

/**
 * The refusal of a throttled address (`AuthThrottle.guard`'s `throttled`): 429 `code`, saying
 * `what` failed and when to retry. `authThrottled('admin_auth_throttled', 'admin authentications')`
 */
export function authThrottled(code: string, what: string): (ms: number) => GatewayError {
  return (ms) => {
    const s = Math.ceil(ms / 1000)
    return new GatewayError(429, code, `Too many failed ${what} from this address; retry in ${s} s.`, {
      headers: { 'retry-after': String(s) },
    })
  }
}
