import { expect, test } from 'bun:test'
import { addBounded, setBounded, valueAt } from '../../src/util/map.ts'

test('valueAt makes the value once and keeps it', () => {
  const m = new Map<string, number[]>()
  valueAt(m, 'a', () => []).push(1)
  valueAt(m, 'a', () => []).push(2)
  expect(m.get('a')).toEqual([1, 2])
})

test('setBounded empties a full map before a new key, never for a key it holds', () => {
  const m = new Map([
    ['a', 1],
    ['b', 2],
  ])
  setBounded(m, 'b', 3, 2)
  expect([...m]).toEqual([
    ['a', 1],
    ['b', 3],
  ])
  setBounded(m, 'c', 4, 2)
  expect([...m]).toEqual([['c', 4]])
  setBounded(m, 'd', 5, 2)
  expect(m.size).toBe(2)
})

test('addBounded empties a full set before a new value, never for one it holds', () => {
  const s = new Set(['a', 'b'])
  addBounded(s, 'a', 2)
  expect([...s]).toEqual(['a', 'b'])
  addBounded(s, 'c', 2)
  expect([...s]).toEqual(['c'])
})
