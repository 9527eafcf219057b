/**
 * @module
 * The `aliases:` checks a schema cannot state (DESIGN §13), each at its path: an id given twice,
 * an exact id that is a model's (the model is looked up first: the alias would never answer), two
 * patterns that tie (as long, and some id matches both), a target that is no model nor alias, a
 * pattern or a virtual model named as a target, a pool naming a member twice, and a loop of
 * aliases. Reads only what the schema passed (intact.ts); a provider whose model list failed its
 * schema is not judged (its own problems are reported where they are).
 *
 * @example
 * checkAliases(raw, problems, prefixes, intact)
 * // [{ path: '/aliases/1/to', message: "no model or alias 'openai/gpt-5' (provider 'openai' has no model 'gpt-5')" }]
 */
import { literalLength, patternsOverlap } from '../util/id-pattern.ts'
import { type Intact, list, type Problem } from './intact.ts'
import type { RawConfig } from './schema.ts'
import { type AliasConfig, isPattern, targetsOf } from './schema-aliases.ts'

/** Each prefix the file names → its models' names, or null where its model list is not intact. */
export type Prefixes = Map<string, Set<string> | null>

/** The aliases a plan may name: exact ids (patterns count as their targets) and their prefixes. */
export interface AliasNames {
  ids: Set<string>
  prefixes: Set<string>
}

const prefixOf = (id: string) => id.slice(0, id.indexOf('/'))

/** Whether `id` is a model the file declares: true, false, or null when that cannot be judged. */
function isModel(prefixes: Prefixes, id: string): boolean | null {
  const prefix = prefixOf(id)
  if (!prefixes.has(prefix)) return false
  const names = prefixes.get(prefix)
  return names ? names.has(id.slice(prefix.length + 1)) : null
}

function whyUnknown(prefixes: Prefixes, id: string): string {
  const prefix = prefixOf(id)
  return prefixes.has(prefix)
    ? `provider '${prefix}' has no model '${id.slice(prefix.length + 1)}'`
    : `no provider has prefix '${prefix}' and no alias has this id`
}

export function checkAliases(
  raw: RawConfig,
  problems: Problem[],
  prefixes: Prefixes,
  intact: Intact,
): AliasNames {
  const names: AliasNames = { ids: new Set(), prefixes: new Set() }
  const aliases = list(raw.aliases)
    .map((alias, i) => ({ alias, i, at: `/aliases/${i}` }))
    .filter(({ at }) => intact(at))
  const exact = new Map<string, { alias: AliasConfig; i: number }>()
  const patterns: { id: string; i: number }[] = []
  for (const { alias, i, at } of aliases) {
    const first = exact.get(alias.id) ?? patterns.find((p) => p.id === alias.id)
    if (first) {
      problems.push({
        path: `${at}/id`,
        message: `the same id as aliases[${first.i}]; give each alias its own id`,
      })
      continue
    }
    if (isPattern(alias.id)) {
      for (const other of patterns) {
        if (literalLength(other.id) === literalLength(alias.id) && patternsOverlap(other.id, alias.id)) {
          problems.push({
            path: `${at}/id`,
            message: `ties with aliases[${other.i}] ('${other.id}'): some id matches both and neither is longer, so neither would win; make one of them longer`,
          })
        }
      }
      patterns.push({ id: alias.id, i })
      continue
    }
    if (isModel(prefixes, alias.id)) {
      problems.push({
        path: `${at}/id`,
        message: `'${alias.id}' is a model's id: a model is looked up before an alias, so this alias would never answer; give it another id`,
      })
      continue
    }
    exact.set(alias.id, { alias, i })
    names.ids.add(alias.id)
    names.prefixes.add(prefixOf(alias.id))
  }
  for (const { alias, at } of aliases) checkTargets(alias, at, exact, prefixes, problems)
  return names
}

/** The targets of one alias: each a model, or an exact alias of one target leading to a model. */
function checkTargets(
  alias: AliasConfig,
  at: string,
  exact: Map<string, { alias: AliasConfig; i: number }>,
  prefixes: Prefixes,
  problems: Problem[],
): void {
  const seen = new Set<string>()
  // An exact alias under a provider's prefix is reached by a plan's or key's `prefix/*`: its
  // targets must stay under that prefix, or `openai/*` would reach an anthropic model.
  const own = isPattern(alias.id) ? null : prefixOf(alias.id)
  const squats = own !== null && prefixes.has(own)
  targetsOf(alias).forEach(({ model }, k) => {
    const path = typeof alias.to === 'string' ? `${at}/to` : `${at}/to/${k}/model`
    const message = seen.has(model)
      ? `'${model}' is in this pool twice; give it one entry with the weight of both`
      : squats && prefixOf(model) !== own
        ? `'${model}' is outside the prefix '${own}/' this alias's id takes from a provider, so a plan or key allowing '${own}/*' would reach it; give the alias a prefix no provider has (e.g. team/…)`
        : targetProblem(alias.id, model, exact, prefixes)
    seen.add(model)
    if (message) problems.push({ path, message })
  })
}

/** What is wrong with one target of alias `from`, or null: it leads to a model. */
function targetProblem(
  from: string,
  model: string,
  exact: Map<string, { alias: AliasConfig; i: number }>,
  prefixes: Prefixes,
): string | null {
  if (isPattern(model)) return `a target is a model id or an alias's id, not a pattern`
  // Follow a chain of aliases to its model: a → b → openai/gpt-4o-mini.
  const chain = [from]
  let id = model
  for (;;) {
    if (isModel(prefixes, id) !== false) return null
    const next = exact.get(id)
    if (!next) return `no model or alias '${id}' (${whyUnknown(prefixes, id)})`
    if (chain.includes(id)) return `a loop of aliases: ${[...chain, id].join(' → ')}`
    if (typeof next.alias.to !== 'string' && next.alias.to.length > 1)
      return `'${id}' is a virtual model (a pool); a target leads to one model — name its members here instead`
    chain.push(id)
    id = targetsOf(next.alias)[0]!.model
  }
}
