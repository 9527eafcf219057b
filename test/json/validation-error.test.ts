import { describe, expect, test } from 'bun:test'
import { Type as T } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { explainValidationError } from '../../src/json/validation-error.ts'

const explain = (schema: Parameters<typeof TypeCompiler.Compile>[0], body: unknown) => {
  const check = TypeCompiler.Compile(schema)
  expect(check.Check(body)).toBe(false)
  return explainValidationError(check.Errors(body), body)
}

describe('explainValidationError: strings', () => {
  // "must be a string; got """ told the client to send what it had sent.
  test('an empty string where a non-empty one is required says so', () => {
    const err = explain(T.Object({ call_id: T.String({ minLength: 1 }) }), { call_id: '' })
    expect(err.param).toBe('call_id')
    expect(err.message).toBe('call_id must be a non-empty string; got "".')
  })

  test('a longer minimum and a maximum are named', () => {
    expect(explain(T.Object({ a: T.String({ minLength: 3 }) }), { a: 'x' }).message).toContain(
      'a string of at least 3 characters',
    )
    expect(explain(T.Object({ a: T.String({ maxLength: 2 }) }), { a: 'xyz' }).message).toContain(
      'a string of at most 2 characters',
    )
  })

  test('a value of another type is still "a string"', () => {
    expect(explain(T.Object({ a: T.String({ minLength: 1 }) }), { a: 5 }).message).toContain(
      'a non-empty string; got 5',
    )
    expect(explain(T.Object({ a: T.String() }), { a: 5 }).message).toContain('must be a string; got 5')
  })
})
