/**
 * @module
 * The upstream body of a Responses pass-through (`/responses`, `/responses/compact`): the client's
 * text with only the fields the gateway sets edited in it (`json/fields.ts`), every other byte as
 * the client sent it — number spelling, escapes, key order, items without a `type` — and a large
 * body kept as its pieces, sent without a copy of it (`json/spliced.ts`), as chat's and Messages'
 * pass-throughs do. A text with a duplicated key is re-serialised instead, so the upstream reads
 * exactly what the gateway checked.
 *
 * @example
 * forwardBody(view.input, text, { model: '"gpt-5"', store: 'false' })
 * // '{"store":false,"model":"gpt-5","input":"hi"}' for '{"model":"openai/gpt-5","input":"hi"}'
 */
import { setTopLevel, spliceTopLevel } from '../../json/fields.ts'
import type { JsonText } from '../../json/spliced.ts'
import type { Forwarding } from '../../pipeline/surface.ts'

/** The output cap of both Responses pass-throughs: `max_output_tokens`, clamped in the body's text. */
export const responsesOutputCap: Forwarding<unknown>['outputCap'] = {
  field: () => 'max_output_tokens',
  clamp: (body, n) => setTopLevel(body, { max_output_tokens: String(n) }),
}

/**
 * `body`: the client's parsed text; `set`: key → its new value's JSON text, replaced where the key
 * is there, else added first.
 */
export function forwardBody(
  body: Record<string, unknown>,
  text: string,
  set: Readonly<Record<string, string>>,
): JsonText {
  const edits = new Map<string, string>()
  const insert: string[] = []
  for (const key in set) {
    if (Object.hasOwn(body, key)) edits.set(key, set[key]!)
    else insert.push(`${JSON.stringify(key)}:${set[key]}`)
  }
  const edited = spliceTopLevel(text, edits, insert.join(','), Object.keys(body).length)
  if (edited !== null) return edited
  const out = { ...body }
  for (const key in set) out[key] = JSON.parse(set[key]!)
  return JSON.stringify(out)
}
