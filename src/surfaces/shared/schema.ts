/**
 * @module
 * TypeBox building blocks the surfaces' request schemas share. Unions that clients get wrong carry
 * two annotations read only when explaining a failure (`json/validation-error.ts`):
 * `x-discriminator` names the key that picks the variant (`role`, `type`), and `x-expected` says in
 * words what the union accepts.
 *
 * @example
 * const Part = Tagged([TextPart, ImagePart], 'type', 'a content part object')
 * const Stop = Nullable(T.String())
 */
import { Kind, Type as T, type TSchema, type TUnion } from '@sinclair/typebox'

/** Where OpenAI accepts `null` for an optional parameter, meaning "not set". */
export const Nullable = <S extends TSchema>(schema: S) => T.Union([schema, T.Null()])

/**
 * A union whose branches are told apart by the literal at `tagKey`. Built by hand because `T.Union`
 * collapses a one-branch union into its branch, losing the annotation; the explainer needs it to
 * report `tools[0].type` rather than a field the wrong branch lacks.
 */
export function Tagged<S extends TSchema[]>(branches: [...S], tagKey: string, expected: string): TUnion<S> {
  return {
    [Kind]: 'Union',
    anyOf: branches,
    'x-discriminator': tagKey,
    'x-expected': expected,
  } as unknown as TUnion<S>
}
