/**
 * @module
 * Which of the models a request's id names a plan or a key lets it reach (DESIGN §13), and the
 * request's fallbacks after the model chosen. A model is reached by its id; an exact alias by its
 * own id (a listed alias only so: it is a product name, reachable only where allowed); an unlisted
 * alias, failing that, through those of its targets the list allows; a pattern alias counts as
 * its targets. A plan allowing only an alias so refuses its target named directly.
 *
 * @example
 * const routed = catalogue.route('team/fast')
 * reachable(routed, (id, tier) => planAllows(plan.models, id, { tier }))  // [] or the members
 * fallbacksOf(primary, members, (id) => catalogue.model(id), allowed)     // the pool's others, then fallbacks
 */
import type { Alias } from './aliases.ts'
import type { CatalogueEntry } from './entry.ts'
import type { Routed } from './routing.ts'

/** Whether a plan's or a key's list allows an id (with its tier, for `tier:NAME`). */
export type Allows = (id: string, tier: string | undefined) => boolean

/** The members of `routed` that `allows` lets the caller reach, in their order. */
export function reachable(routed: Routed, allows: Allows): CatalogueEntry[] {
  const { alias, members } = routed
  if (alias && !alias.pattern && allows(alias.id, alias.tier)) return members
  return members.filter((m) => reaches(alias, m, allows))
}

/** Whether `allows` lets the caller reach `member` of what `alias` (null: a model named) names. */
export function reaches(alias: Alias | null, member: CatalogueEntry, allows: Allows): boolean {
  if (!alias || alias.pattern) return allows(member.id, member.model.tier)
  if (allows(alias.id, alias.tier)) return true
  return !alias.listed && allows(member.id, member.model.tier)
}

/**
 * The request's fallbacks after `primary`, each once: the pool's other members (in the pool's
 * order: by weight), then the targets' own `fallbacks` that `allowed` passes (the plan and the key
 * reach them), the primary's first. A fallback no model has is left out (the config checks
 * refuse one).
 */
export function fallbacksOf(
  primary: CatalogueEntry,
  members: readonly CatalogueEntry[],
  model: (id: string) => CatalogueEntry | undefined,
  allowed: (entry: CatalogueEntry) => boolean,
): CatalogueEntry[] {
  // No other member and no fallbacks (most requests): none, without the walk's set, lists and arrow.
  if (alone(primary, members)) return []
  const seen = new Set([primary.id])
  const out: CatalogueEntry[] = []
  const add = (e: CatalogueEntry) => {
    seen.add(e.id)
    out.push(e)
  }
  for (const m of members) if (!seen.has(m.id)) add(m)
  for (const m of [primary, ...members]) {
    for (const id of m.model.fallbacks ?? []) {
      const fb = seen.has(id) ? undefined : model(id)
      if (fb && allowed(fb)) add(fb)
    }
  }
  return out
}

/** `primary` has no fallbacks, and `members` no member but it. */
function alone(primary: CatalogueEntry, members: readonly CatalogueEntry[]): boolean {
  if (primary.model.fallbacks?.length) return false
  for (const m of members) if (m.id !== primary.id) return false
  return true
}
