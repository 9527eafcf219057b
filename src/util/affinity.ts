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
 * Bounded: a table keeps at most `maxEntries` sessions (the least recently used go first, a
 * generation at a time) and honours a held choice for at most `ttlMs` since the session's last use, so a client that sends a new id with every request costs a bounded
 * table and nothing more. Sessions are kept by a 64-bit hash of their id, never the id itself (a
 * `prompt_cache_key` may be anything a client chose), and never logged.
 *
 * @example
 * const table = new AffinityTable(systemClock)
 * const s = sessionHash('01a22740-2a99-7721-a9d8-d5cb9ba38307')
 * const i = table.choose(s, [3, 1], (i) => !resting(i))   // the same index every turn while it may answer
 */
import type { Clock } from './clock.ts'

/** A session as the tables keep it: a 53-bit hash of its id (a number: cheap Map keys), never the id. */
export type SessionHash = number

/** Sessions a table remembers, at most (about 100 bytes each: ~1 MB a pool). */
export const AFFINITY_MAX_ENTRIES = 10_000
/** How long a session is remembered after its last request: an hour, the longest prompt-cache TTL Anthropic sells. */
export const AFFINITY_TTL_MS = 3_600_000

export function sessionHash(id: string): SessionHash {
  // Two 32-bit hashes make 53 bits, all in number arithmetic (a 64-bit bigint hash and its text
  // cost several µs a request).
  return Bun.hash.murmur32v3(id, 0) * 2 ** 21 + (Bun.hash.murmur32v3(id, 1) >>> 11)
}

/** A 32-bit hash of (session, candidate): murmur3's finalizer over the session's two halves and the index. */
function mix(session: SessionHash, index: number): number {
  let x =
    (session >>> 0) ^ Math.imul(Math.floor(session / 2 ** 32), 0x27d4eb2f) ^ Math.imul(index + 1, 0x9e3779b1)
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b)
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35)
  return (x ^ (x >>> 16)) >>> 0
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
    // A 32-bit hash (number arithmetic, no bigint on the hot path), shifted off 0 so the
    // logarithm is finite and negative.
    const u = (mix(session, i) + 0.5) / 2 ** 32
    const score = -Math.max(1, weights[i]!) / Math.log(u)
    if (score > bestScore) {
      bestScore = score
      best = i
    }
  }
  return best
}

/** Which candidate each recent session is on, count- and TTL-bounded. One per pool (or virtual model). */
export class AffinityTable {
  /**
   * Two generations instead of one LRU map: a session used lately is in `young`; when `young` holds
   * half the bound it becomes `old` and the former `old` is dropped whole. A session found in `old`
   * moves back to `young`. Every step is O(1) — an LRU map that deletes its oldest entry on each
   * insert makes the engine skip a growing run of deleted slots to find it (~50–150 µs a request
   * for a client sending a new id each time, measured) — and at most `maxEntries` are held.
   */
  private young = new Map<SessionHash, { index: number; at: number }>()
  private old = new Map<SessionHash, { index: number; at: number }>()
  private readonly half: number

  constructor(
    private readonly clock: Clock,
    maxEntries = AFFINITY_MAX_ENTRIES,
    private readonly ttlMs = AFFINITY_TTL_MS,
  ) {
    this.half = Math.max(1, Math.floor(maxEntries / 2))
  }

  /** Sessions held now (at most `maxEntries`). */
  get size(): number {
    return this.young.size + this.old.size
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
    let held = this.young.get(session)
    if (held === undefined) {
      held = this.old.get(session)
      if (held !== undefined) this.old.delete(session)
    }
    // A session idle past the TTL ranks afresh: its cache at the provider is gone too.
    if (
      held !== undefined &&
      now - held.at <= this.ttlMs &&
      held.index < weights.length &&
      usable(held.index)
    ) {
      held.at = now
      this.keep(session, held)
      return held.index
    }
    const index = rendezvous(session, weights, usable)
    if (index !== null) this.keep(session, { index, at: now })
    else if (held !== undefined) this.young.delete(session)
    return index
  }

  private keep(session: SessionHash, entry: { index: number; at: number }): void {
    if (this.young.get(session) === entry) return
    this.young.set(session, entry)
    if (this.young.size >= this.half) {
      this.old = this.young
      this.young = new Map()
    }
  }
}
