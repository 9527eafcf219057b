/**
 * `LargeBodies` (DESIGN §16): one full collection once the large bodies read since the last pass a
 * quarter of those in flight (at least `COLLECT_MIN`); small bodies never count.
 */
import { expect, test } from 'bun:test'
import { COLLECT_MIN, LARGE_BODY, LargeBodies } from '../../src/pipeline/large-bodies.ts'

const MB = 1024 * 1024

test('small bodies never collect; large ones every COLLECT_MIN while few are in flight', () => {
  let collected = 0
  const bodies = new LargeBodies(() => collected++)
  for (let i = 0; i < 1000; i++) expect(bodies.read(LARGE_BODY - 1)).toBe(0)
  expect(collected).toBe(0)
  // One 10 MB body at a time, each done before the next: a collection at every second one (20 MB
  // read passes COLLECT_MIN).
  expect(COLLECT_MIN).toBe(16 * MB)
  for (let i = 0; i < 16; i++) bodies.done(bodies.read(10 * MB))
  expect(collected).toBe(8)
})

test('with many in flight, a collection per quarter of them', () => {
  let collected = 0
  const bodies = new LargeBodies(() => collected++)
  // 48 × 10 MB in flight: 480 MB, so one collection per 120 MB read once they are all in.
  const open = Array.from({ length: 48 }, () => bodies.read(10 * MB))
  collected = 0
  for (let i = 0; i < 48; i++) {
    bodies.done(open[i]!)
    open[i] = bodies.read(10 * MB)
  }
  // 480 MB read at 120 MB a collection: 4, or 5 with what was read since the last one before.
  expect(collected).toBeGreaterThanOrEqual(4)
  expect(collected).toBeLessThanOrEqual(5)
})
