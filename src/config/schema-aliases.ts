/**
 * @module
 * The `aliases:` list (DESIGN §13): names the operator gives to models. An id is `<prefix>/<name>`
 * like a model's (its prefix may be one no provider has); with a `*` in it, it is a pattern (any
 * run of characters). `to` is one model id, or a virtual model: a weighted pool of them. The checks
 * a schema cannot state (unknown targets, loops, ties, duplicates) are in check-aliases.ts.
 *
 * @example
 * aliases:
 *   - { id: team/fast, to: openai/gpt-4o-mini }
 *   - { id: anthropic/claude-haiku-4-5-*, to: anthropic/claude-haiku-4-5 }
 *   - { id: team/coder, to: [{ model: a/x, weight: 3 }, { model: b/y }], listed: false }
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { Closed } from './schema-units.ts'

/** `<prefix>/<name>`, no whitespace, neither side empty (`patternWhy`: the error's words, schema-problems.ts). */
export const ModelId = T.String({
  pattern: '^[^/\\s]+/\\S+$',
  patternWhy: "a model id, 'prefix/name' without spaces",
})

export const PoolMemberSchema = T.Object(
  {
    model: ModelId,
    /** Its share of the pool's requests against the others' (default 1). */
    weight: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  Closed,
)

export const AliasSchema = T.Object(
  {
    id: ModelId,
    to: T.Union([ModelId, T.Array(PoolMemberSchema, { minItems: 1 })]),
    /** false: callable, but left out of `/v1/models` (default: listed). */
    listed: T.Optional(T.Boolean()),
    description: T.Optional(T.String()),
  },
  Closed,
)

export type AliasConfig = Static<typeof AliasSchema>
export type PoolMemberConfig = Static<typeof PoolMemberSchema>

/** An alias's targets as a pool: one target is a pool of one (weight 1). */
export function targetsOf(alias: Pick<AliasConfig, 'to'>): { model: string; weight: number }[] {
  if (typeof alias.to === 'string') return [{ model: alias.to, weight: 1 }]
  return alias.to.map((m) => ({ model: m.model, weight: m.weight ?? 1 }))
}

/** Whether an alias id is a pattern (matched against the ids requests name). */
export const isPattern = (id: string): boolean => id.includes('*')
