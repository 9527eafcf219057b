/** JsonEnd: when a tool call's streamed arguments are one whole JSON object (no more can follow). */
import { expect, test } from 'bun:test'
import { JsonEnd } from '../../../src/surfaces/messages/json-end.ts'

const whole = (...pieces: string[]): boolean => {
  const end = new JsonEnd()
  for (const p of pieces) end.feed(p)
  return end.whole
}

test('an object is whole at its closing brace, fed in any pieces', () => {
  expect(whole('{"x":1}')).toBe(true)
  expect(whole('{"x":', '1}')).toBe(true)
  expect(whole(' {', '"a": {"b": [1, {"c": 2}]}', '}\n ')).toBe(true)
  expect(whole('{}')).toBe(true)
})

test('not yet whole: open, or a brace inside a string', () => {
  expect(whole('')).toBe(false)
  expect(whole('{"x":')).toBe(false)
  expect(whole('{"a":{"b":1}')).toBe(false)
  expect(whole('{"a":"}"')).toBe(false)
  expect(whole('{"a":"\\"}"')).toBe(false)
  expect(whole('{"a":"\\\\"}')).toBe(true)
  expect(whole('{"a":"\\', '"}', '"}')).toBe(true)
})

test('never whole: not an object, or text after its end', () => {
  expect(whole('[1]')).toBe(false)
  expect(whole('1')).toBe(false)
  expect(whole('"s"')).toBe(false)
  expect(whole('{"x":1}', ',')).toBe(false)
  expect(whole('{"x":1}{}')).toBe(false)
})

test('never whole: a closer that does not match its opener (review66b: `{"a":1]` read as whole)', () => {
  expect(whole('{"a":1]')).toBe(false)
  expect(whole('{"a":[1]', ']')).toBe(false)
  expect(whole('{"a":[1}', ']}')).toBe(false)
  expect(whole('{"a":[1]', '}')).toBe(true)
})
