/**
 * @module
 * Session affinity (DESIGN §14): the turns of one agent session go to one key of a pool, so the
 * provider's prompt cache — kept per key (organisation) and model — stays warm. A session's first
 * choice is the pool's key that ranks highest for it by weighted rendezvous hashing among the keys
 * that can answer now: a pure function of the session and the weights, so every worker and every
 * replica sends a new session to the same key without sharing any state, and sessions spread over
 * the keys by weight. When that key rests (429, cooldown, open circuit) the session moves to its
 * next-ranked key — the same one on every process — and `AffinityTable` remembers the move, so the
 * session stays on the new key after the old one wakes (its cache is there now).
 *
 * The same pick serves any weighted choice a session should keep: a pool's keys
 * (providers/resilience/key-pool.ts), and a virtual model's targets (`table.choose(session,
 * weights, usable)` with the targets' weights; here in util/ so the catalogue can use it).
 *
 * Bounded: a table keeps at most `maxEntries` sessions (least recently used out first) for at most
 * `ttlMs` since their last use, so a client that sends a new id with every request costs a bounded
 * table and nothing more. Sessions are kept by a 64-bit hash of their id, never the id itself (a
 * `prompt_cache_key` may be anything a client chose), and never logged.
 *
 * @example
 * const table = new AffinityTable(systemClock)
 * const s = sessionHash('01a22740-2a99-7721-a9d8-d5cb9ba38307')
 * const i = table.choose(s, [3, 1], (i) => !resting(i))   // the same index every turn while it may answer
 */
import type { Clock } from './clock.ts'

/** A session as the tables keep it: a hash of its id (base 36), never the id. */
export type SessionHash = string

/** Sessions a table remembers, at most (about 100 bytes each: ~1 MB a pool). */
export const AFFINITY_MAX_ENTRIES = 10_000
/** How long a session is remembered after its last request: an hour, the longest prompt-cache TTL Anthropic sells. */
export const AFFINITY_TTL_MS = 3_600_000

export function sessionHash(id: string): SessionHash {
  return Bun.hash.wyhash(id).toString(36)
}

/**
 * The index (into `weights`) that ranks highest for `session` among those `usable` says may take
 * it; null when none may. Weighted rendezvous: each candidate scores `-weight / ln(u)` with `u` a
 * hash of (session, index) in (0, 1), so a candidate of weight 3 wins three times as many sessions
 * as one of weight 1, and taking one candidate out moves only the sessions it held.
 */
export function rendezvous(
  session: SessionHash,
  weights: readonly number[],
  usable: (index: number) => boolean,
): number | null {
  let best: number | null = null
  let bestScore = Number.NEGATIVE_INFINITY
  for (let i = 0; i < weights.length; i++) {
    if (!usable(i)) continue
    // 53 bits of the hash, shifted off 0 so the logarithm is finite and negative.
    const h = Bun.hash.wyhash(session, BigInt(i)) & 0x1f_ffff_ffff_ffffn
    const u = (Number(h) + 0.5) / 2 ** 53
    const score = -Math.max(1, weights[i]!) / Math.log(u)
    if (score > bestScore) {
      bestScore = score
      best = i
    }
  }
  return best
}

/** Which candidate each recent session is on, LRU- and TTL-bounded. One per pool (or virtual model). */
export class AffinityTable {
  /** Insertion order is recency order: a use moves the entry to the end. */
  private readonly entries = new Map<SessionHash, { index: number; at: number }>()

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = AFFINITY_MAX_ENTRIES,
    private readonly ttlMs = AFFINITY_TTL_MS,
  ) {}

  get size(): number {
    return this.entries.size
  }

  /**
   * The candidate for `session`: the one it is on, if `usable` lets it take the request; else the
   * highest-ranked usable one (rendezvous), which it is on from now. Null when none is usable.
   */
  choose(
    session: SessionHash,
    weights: readonly number[],
    usable: (index: number) => boolean,
  ): number | null {
    const now = this.clock.now()
    const held = this.entries.get(session)
    if (held !== undefined) {
      this.entries.delete(session)
      if (now - held.at <= this.ttlMs && held.index < weights.length && usable(held.index)) {
        this.entries.set(session, { index: held.index, at: now })
        return held.index
      }
    }
    const index = rendezvous(session, weights, usable)
    if (index !== null) this.remember(session, index, now)
    return index
  }

  private remember(session: SessionHash, index: number, now: number): void {
    this.entries.set(session, { index, at: now })
    // The oldest first: Map iterates in insertion order, and every use re-inserts.
    for (const [oldest, e] of this.entries) {
      if (this.entries.size <= this.maxEntries && now - e.at <= this.ttlMs) break
      this.entries.delete(oldest)
    }
  }
}
