/**
 * @module
 * What a plan's `models` list and a key's model list take (DESIGN §3, §13), judged in one place:
 * `*`, `tier:NAME` (a tier some model has), `prefix/*` (a provider's prefix, or one only aliases
 * have), or the id of a model or an exact alias. A mistyped entry is an error, not a list silently
 * without the model: `config check` reports a plan's at its path, the admin API and the command
 * line refuse a key's with 400 naming `models`.
 *
 * @example
 * listEntryProblem(namesOf(config), 'tier:nope')
 * // → "no model has tier 'nope' (the tiers: free, pro)"
 */
import type { AliasNames, Prefixes } from './check-aliases.ts'
import type { ProviderConfig } from './schema.ts'
import { type AliasConfig, isPattern } from './schema-aliases.ts'

/** The names a list may use. */
export interface ModelNames {
  /** Each provider prefix → its models' names, or null where they cannot be judged. */
  prefixes: Prefixes
  aliases: AliasNames
  /** The tiers the models have, or null where they cannot be judged. */
  tiers: Set<string> | null
}

/** The names of a loaded config's catalogue. */
export function namesOf(config: { providers: ProviderConfig[]; aliases: AliasConfig[] }): ModelNames {
  const exact = config.aliases.filter((a) => !isPattern(a.id)).map((a) => a.id)
  return {
    prefixes: new Map(config.providers.map((p) => [p.prefix, new Set(p.models.map((m) => m.name))])),
    aliases: { ids: new Set(exact), prefixes: new Set(exact.map((id) => id.slice(0, id.indexOf('/')))) },
    tiers: new Set(config.providers.flatMap((p) => p.models.flatMap((m) => (m.tier ? [m.tier] : [])))),
  }
}

/** Why `entry` names nothing a list can take, or null when it does. */
export function listEntryProblem(names: ModelNames, entry: string): string | null {
  if (entry === '*' || names.aliases.ids.has(entry)) return null
  if (entry.startsWith('tier:')) {
    const tier = entry.slice(5)
    if (!names.tiers || names.tiers.has(tier)) return null
    const known = names.tiers.size ? `the tiers: ${[...names.tiers].join(', ')}` : 'no model has a tier'
    return `no model has tier '${tier}' (${known})`
  }
  const slash = entry.indexOf('/')
  const prefix = slash > 0 ? entry.slice(0, slash) : ''
  if (!prefix || slash === entry.length - 1)
    return `'${entry}' is not 'prefix/name', 'prefix/*', 'tier:NAME' or '*'`
  if (!names.prefixes.has(prefix)) {
    // `team/*` names every alias of that prefix; any other id there would be an alias's.
    if (names.aliases.prefixes.has(prefix) && entry === `${prefix}/*`) return null
    const or = names.aliases.prefixes.has(prefix) ? ` and no alias has the id '${entry}'` : ''
    return `no provider has prefix '${prefix}'${or}`
  }
  // A mistyped model id would leave the list without the model, every request to it a 403.
  const name = entry.slice(slash + 1)
  const models = names.prefixes.get(prefix)
  if (name === '*' || !models || models.has(name)) return null
  return `provider '${prefix}' has no model '${name}' (its models: ${[...models].join(', ')})`
}
