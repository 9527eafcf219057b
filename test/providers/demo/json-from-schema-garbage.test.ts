/**
 * The demo model's schema sampler on what clients really send as tool parameters: sub-schemas that
 * are strings, numbers, arrays or null must give a value, not a TypeError (which was a 502,
 * found by the Responses fuzz test).
 */
import { expect, test } from 'bun:test'
import { jsonFromSchema } from '../../../src/providers/demo/json-from-schema.ts'

const value = (schema: unknown) => JSON.parse(jsonFromSchema(schema as never, 'hi', 1_000).json)

test('non-object sub-schemas sample as null instead of throwing', () => {
  for (const sub of ['input_audio', 3, [1, 2], null, true]) {
    expect(() => value({ type: 'object', properties: { a: sub } })).not.toThrow()
    expect(() => value({ type: 'object', properties: sub })).not.toThrow()
    expect(() => value({ type: 'array', minItems: 2, items: sub })).not.toThrow()
  }
  expect(value({ type: 'object', properties: { a: 'x' } })).toEqual({ a: null })
})
