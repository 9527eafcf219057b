/**
 * @module
 * The operator's names for models (DESIGN §13), as the catalogue looks them up: exact aliases by
 * id, then patterns (`*`: any run of characters; the one with the most other characters wins).
 * Every alias is a pool of one or more models: one target is a pool of one; a virtual model
 * spreads its requests by weight with smooth weighted round-robin (the key pools' algorithm,
 * util/smooth-round-robin.ts), and its other members follow the pick, by weight, as the
 * request's first fallbacks. Chains of one-target aliases are followed to their model when built.
 *
 * @example
 * const aliases = new Aliases(config.aliases, (id) => catalogue.model(id))
 * aliases.find('anthropic/claude-haiku-4-5-20251001')?.pool.pick() // [anthropic/claude-haiku-4-5]
 */
import { type AliasConfig, isPattern, targetsOf } from '../config/schema-aliases.ts'
import { rendezvous, type SessionHash } from '../util/affinity.ts'
import { literalLength, matchesPieces, patternPieces } from '../util/id-pattern.ts'
import { SmoothRoundRobin } from '../util/smooth-round-robin.ts'
import type { CatalogueEntry } from './entry.ts'

export interface PoolMember {
  entry: CatalogueEntry
  weight: number
}

/**
 * An alias's targets and the order requests take them. A request of an agent session goes to the
 * session's target (util/affinity.ts: ranked by weight for the session, the same on every process),
 * so the provider's prompt cache stays warm; one without a session takes the round-robin's turn.
 * Health is the attempt loop's: a failing target's request falls over to the others, and the
 * session's next request tries its target first again.
 */
export class Pool {
  readonly members: readonly PoolMember[]
  readonly #order: SmoothRoundRobin
  /** The members by weight, heaviest first (config order among equals): the fallbacks' order. */
  readonly #byWeight: readonly CatalogueEntry[]

  constructor(members: readonly PoolMember[]) {
    this.members = members
    this.#order = new SmoothRoundRobin(members.map((m) => m.weight))
    this.#byWeight = members
      .map((m, i) => ({ m, i }))
      .sort((a, b) => b.m.weight - a.m.weight || a.i - b.i)
      .map(({ m }) => m.entry)
  }

  /**
   * The models to try for one request: the session's target or the round-robin's pick, then the
   * others by weight. The pick is made among the members `eligible` passes (the plan and key reach
   * them, they serve the operation): one it does not never takes a turn nor a session's place, so
   * the others keep their shares. With none eligible, no turn is taken (the request is refused).
   */
  pick(session?: SessionHash | null, eligible?: (entry: CatalogueEntry) => boolean): CatalogueEntry[] {
    if (this.members.length === 1) return [this.members[0]!.entry]
    const usable = eligible ? (i: number) => eligible(this.members[i]!.entry) : ALL
    // A session's target is its rendezvous rank, a function of the id and the weights alone:
    // nothing to remember (health is the attempt loop's).
    const i = session == null ? this.#order.pick(usable) : rendezvous(session, this.#order.weights, usable)
    if (i === null) return [...this.#byWeight]
    const first = this.members[i]!.entry
    return [first, ...this.#byWeight.filter((e) => e !== first)]
  }
}

const ALL = () => true

export interface Alias {
  id: string
  /** A pattern (`*` in its id) counts as its targets for plans and keys, and is never listed. */
  pattern: boolean
  /** A pattern's pieces between its `*`s, split once at load (null: an exact id). */
  pieces: readonly string[] | null
  listed: boolean
  description: string | undefined
  pool: Pool
  /** The tier every target shares (a plan's `tier:NAME` admits the alias then); undefined otherwise. */
  tier: string | undefined
}

export class Aliases {
  readonly #exact = new Map<string, Alias>()
  /** Longest first: the first that matches wins. */
  readonly #patterns: Alias[] = []
  /** The prefixes of the exact aliases (`team` of `team/fast`), for a 404's wording. */
  readonly prefixes = new Set<string>()

  /** Throws a plain `Error` on a target that leads to no model: the config checks refuse it first. */
  constructor(configs: readonly AliasConfig[], model: (id: string) => CatalogueEntry | undefined) {
    const byId = new Map(configs.map((c) => [c.id, c] as const))
    const leadsTo = (id: string, seen: string[]): CatalogueEntry => {
      const found = model(id)
      if (found) return found
      const next = byId.get(id)
      if (!next || isPattern(id) || seen.includes(id))
        throw new Error(`alias target '${id}' leads to no model`)
      const targets = targetsOf(next)
      if (targets.length !== 1) throw new Error(`alias target '${id}' is a pool`)
      return leadsTo(targets[0]!.model, [...seen, id])
    }
    for (const c of configs) {
      const members = targetsOf(c).map((t) => ({ entry: leadsTo(t.model, [c.id]), weight: t.weight }))
      const tiers = new Set(members.map((m) => m.entry.model.tier))
      const alias: Alias = {
        id: c.id,
        pattern: isPattern(c.id),
        pieces: isPattern(c.id) ? patternPieces(c.id) : null,
        listed: c.listed ?? true,
        description: c.description,
        pool: new Pool(members),
        tier: tiers.size === 1 ? [...tiers][0] : undefined,
      }
      if (alias.pattern) this.#patterns.push(alias)
      else {
        this.#exact.set(alias.id, alias)
        this.prefixes.add(alias.id.slice(0, alias.id.indexOf('/')))
      }
    }
    this.#patterns.sort((a, b) => literalLength(b.id) - literalLength(a.id))
  }

  /** The alias an id names: an exact one, else the longest pattern it matches. */
  find(id: string): Alias | undefined {
    return this.#exact.get(id) ?? this.#patterns.find((p) => matchesPieces(p.pieces!, id))
  }

  /** Every alias, the exact ones in config order, then the patterns longest first (the operator's view). */
  all(): Alias[] {
    return [...this.#exact.values(), ...this.#patterns]
  }

  /** The exact aliases, in config order (patterns name no one id to list). */
  exact(): Alias[] {
    return [...this.#exact.values()]
  }
}
