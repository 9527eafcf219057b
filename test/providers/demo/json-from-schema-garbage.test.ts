/**
 * The demo model's schema sampler on what clients really send as tool parameters: sub-schemas that
 * are strings, numbers, arrays or null must give a value, not a TypeError (which was a 502,
 * found by the Responses fuzz test).
 */
import { expect, test } from 'bun:test'
import { valueFromSchema } from '../../../src/providers/demo/json-from-schema.ts'

test('non-object sub-schemas sample as null instead of throwing', () => {
  for (const sub of ['input_audio', 3, [1, 2], null, true]) {
    expect(() => valueFromSchema({ type: 'object', properties: { a: sub } } as never, 'hi')).not.toThrow()
    expect(() => valueFromSchema({ type: 'object', properties: sub } as never, 'hi')).not.toThrow()
    expect(() => valueFromSchema({ type: 'array', minItems: 2, items: sub } as never, 'hi')).not.toThrow()
  }
  expect(valueFromSchema({ type: 'object', properties: { a: 'x' } } as never, 'hi')).toEqual({ a: null })
})
