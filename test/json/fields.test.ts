/** Text edits of a JSON body that keep every other byte (json/fields.ts). */
import { describe, expect, test } from 'bun:test'
import { setTopLevel, streamingBody } from '../../src/json/fields.ts'

describe('streamingBody', () => {
  test('sets stream and the extra fields in the text: replaced where there, added first, other bytes kept', () => {
    expect(
      streamingBody('{"model":"m", "stream":false,"x":1.50}', { stream_options: '{"include_usage":true}' }),
    ).toBe('{"stream_options":{"include_usage":true},"model":"m", "stream":true,"x":1.50}')
    expect(streamingBody('{"model":"m"}')).toBe('{"stream":true,"model":"m"}')
  })

  test('a "stream" inside a string or deeper is left alone', () => {
    expect(streamingBody('{"a":{"stream":false},"b":"\\"stream\\":false"}')).toBe(
      '{"stream":true,"a":{"stream":false},"b":"\\"stream\\":false"}',
    )
  })
})

describe('setTopLevel', () => {
  test('an empty object gets the fields inside its braces (it wrote them after the object)', () => {
    expect(setTopLevel('{}', { a: '1' })).toBe('{"a":1}')
    expect(setTopLevel(' { } ', { a: '1', b: '"x"' })).toBe(' {"a":1,"b":"x" } ')
  })
})
