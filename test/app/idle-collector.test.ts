/**
 * The idle collection (`src/app/serve.ts`): one full collection once a whole watch interval
 * passed with no request begun and none open — never under traffic, never twice for one lull.
 */
import { expect, test } from 'bun:test'
import { idleCollector } from '../../src/app/serve.ts'

test('collects once per lull, only when nothing began for an interval and nothing is open', () => {
  const traffic = { begun: 0, inFlight: 0 }
  let collections = 0
  const tick = idleCollector(traffic, () => collections++)
  tick() // first look: takes the count
  tick() // a quiet interval: collects
  expect(collections).toBe(1)
  tick()
  expect(collections).toBe(1) // the same lull: not again

  traffic.begun = 5 // traffic
  tick()
  expect(collections).toBe(1)
  traffic.begun = 9
  traffic.inFlight = 2 // a long stream still open after the last request began
  tick()
  tick()
  expect(collections).toBe(1)
  traffic.inFlight = 0
  tick()
  expect(collections).toBe(2)
})
