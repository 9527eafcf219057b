/**
 * @module
 * The authentication cache: a key's record and its account by the key's SHA-256, so the common
 * request does no store query to authenticate.
 *
 * Freshness bound (AUTH_CHECK_MS = 250 ms): every write that can change an authentication answer
 * bumps one generation counter in the database, in the writer's own commit (triggers: SQLite
 * migration 7, PostgreSQL migration 7), so the CLI, a sibling worker or another replica bump it
 * without knowing about any cache. Entries are used only while the last generation read that
 * found them valid *started* less than AUTH_CHECK_MS ago; past that a request waits for a new
 * read (one read per process at a time, started a little early so most requests never wait),
 * and a moved counter drops everything. So a change committed at T is applied to every request
 * that starts authenticating after T + 250 ms, on every process and replica. 250 ms keeps the
 * counter read at ≤ 4 per second per process (nothing next to the traffic it saves) while
 * staying well inside the 1 s an operator can notice.
 *
 * Writes made through this process's store drop the cache at once (see invalidating-store.ts):
 * the admin API, the console and admission's suspensions take effect on the next request.
 *
 * Only records are cached, never a decision: plan expiry and the end of a suspension are compared
 * with the clock on every request by the caller. Entries are keyed by the key's hash (never the
 * key), bounded (least recently used dropped first), and unknown hashes are remembered in a
 * separate, smaller set so a flood of made-up keys cannot push out the real ones.
 */
import type { AccountRecord, KeyRecord, Store } from '../store/index.ts'

/** How stale (ms) an authentication answer may be: the bound on a change made elsewhere. */
export const AUTH_CHECK_MS = 250

export interface Found {
  key: KeyRecord
  account: AccountRecord
}

export interface AuthCacheOptions {
  /** The freshness bound in ms (AUTH_CHECK_MS). */
  checkMs?: number
  /** Known keys kept; 0 turns the cache off (every request reads the store). */
  maxKeys?: number
  /** Unknown hashes remembered. */
  maxUnknown?: number
  /** A monotonic clock in ms (tests inject one). Never the request clock: a test's manual clock stands still. */
  now?: () => number
}

/** A refresh starts once this fraction of the bound has passed, so it is usually done before the deadline. */
const AHEAD = 0.8

export class AuthCache {
  private readonly known = new Map<string, Found>()
  private readonly unknown = new Set<string>()
  private readonly checkMs: number
  private readonly maxKeys: number
  private readonly maxUnknown: number
  private readonly now: () => number
  private generation: number | null = null
  /** When the generation read that last validated the entries started (monotonic ms). */
  private validatedAt = Number.NEGATIVE_INFINITY
  private checking: Promise<void> | null = null
  /** Moves whenever entries are dropped: a lookup that began before must not store its answer. */
  private epoch = 0

  constructor(
    private readonly source: Pick<Store, 'findKeyByHash' | 'authGeneration'>,
    opts: AuthCacheOptions = {},
  ) {
    this.checkMs = opts.checkMs ?? AUTH_CHECK_MS
    this.maxKeys = opts.maxKeys ?? 10_000
    this.maxUnknown = opts.maxUnknown ?? 1_000
    this.now = opts.now ?? (() => performance.now())
  }

  /**
   * The key and its account for a key hash, at most `checkMs` stale; null for an unknown hash.
   * A hit inside the bound answers synchronously (no promise on the hot path).
   */
  find(hash: string): Found | null | Promise<Found | null> {
    const age = this.now() - this.validatedAt
    if (age >= this.checkMs) return this.fresh().then(() => this.cached(hash))
    if (age >= this.checkMs * AHEAD && !this.checking) {
      // Early: read the generation now without holding this request up; a failure changes
      // nothing (the request that reaches the deadline reads it again, and waits).
      this.checking = this.check()
      this.checking.catch(() => {})
    }
    return this.cached(hash)
  }

  private cached(hash: string): Found | null | Promise<Found | null> {
    const hit = this.known.get(hash)
    if (hit) {
      // Re-inserted at the end: Map order is the recency order the size cap evicts by.
      this.known.delete(hash)
      this.known.set(hash, hit)
      return hit
    }
    if (this.unknown.has(hash)) return null
    return this.load(hash)
  }

  /** Reads `hash` from the store now, replacing what the cache held for it. */
  async load(hash: string): Promise<Found | null> {
    const epoch = this.epoch
    const found = await this.source.findKeyByHash(hash)
    if (epoch === this.epoch) this.remember(hash, found)
    return found
  }

  /** Drops every entry: after a write through this process that can change an answer. */
  invalidate(): void {
    this.known.clear()
    this.unknown.clear()
    this.epoch++
  }

  get size(): { known: number; unknown: number } {
    return { known: this.known.size, unknown: this.unknown.size }
  }

  /**
   * Waits until a generation read that started within the bound has finished (at most two
   * reads: the one in flight may have started too early, the next starts after this call did).
   */
  private async fresh(): Promise<void> {
    while (this.now() - this.validatedAt >= this.checkMs) {
      this.checking ??= this.check()
      await this.checking
    }
  }

  private async check(): Promise<void> {
    const started = this.now()
    try {
      const generation = await this.source.authGeneration()
      if (generation !== this.generation) {
        this.invalidate()
        this.generation = generation
      }
      this.validatedAt = Math.max(this.validatedAt, started)
    } finally {
      this.checking = null
    }
  }

  private remember(hash: string, found: Found | null): void {
    if (this.maxKeys === 0) return
    if (found) {
      if (this.known.size >= this.maxKeys) this.known.delete(this.known.keys().next().value!)
      this.known.set(hash, found)
    } else {
      if (this.unknown.size >= this.maxUnknown) this.unknown.delete(this.unknown.values().next().value!)
      this.unknown.add(hash)
    }
  }
}
