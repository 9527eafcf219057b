/**
 * count_tokens' per-key throttle holds `perSecond` in any second, not per clock second: a fixed
 * one-second slot let a client make twice its rate across a slot's edge (20 calls at .9 s, 20 more
 * at 1.1 s). Driven through the surface's own `throttle` in real time, then the window itself
 * (`SlidingLog`) on a made-up clock: O(1) a call, and a client cycling keys cannot grow it.
 */
import { expect, test } from 'bun:test'
import { SlidingLog } from '../../src/limits/sliding-log.ts'
import { countTokensSurface } from '../../src/surfaces/messages/count-tokens.ts'
import type { GatewayError } from '../../src/util/errors.ts'

const now = () => performance.timeOrigin + performance.now()

/** Sleeps until the clock's millisecond within its second is `ms`. */
async function untilMsOfSecond(ms: number): Promise<void> {
  const into = now() % 1000
  await Bun.sleep((ms - into + 1000) % 1000)
}

const refused = (take: () => void): GatewayError | null => {
  try {
    take()
    return null
  } catch (e) {
    return e as GatewayError
  }
}

test('20 calls at .9 s and 20 more at 1.1 s: the second 20 are refused, each saying how long to wait', async () => {
  const surface = countTokensSurface(20)
  await untilMsOfSecond(880)
  // The first call's time lies in [firstBefore, firstAfter]; the refused one's in [before, after].
  const firstBefore = now()
  expect(refused(() => surface.throttle('k'))).toBeNull()
  const firstAfter = now()
  for (let i = 1; i < 20; i++) expect(refused(() => surface.throttle('k'))).toBeNull()
  await untilMsOfSecond(120) // the next second on the clock, 240 ms later
  const before = now()
  const error = refused(() => surface.throttle('k'))
  const after = now()
  expect(error?.status).toBe(429)
  expect(error?.code).toBe('count_tokens_throttled')
  expect(error?.headers?.['retry-after']).toBe('1')
  const waitMs = Number(error?.headers?.['retry-after-ms'])
  // The wait is until the first call leaves the window: its time + 1 s − now, bracketed by the
  // clocks read around both calls (± 1 ms of rounding), however late a loaded machine ran them.
  expect(waitMs).toBeGreaterThanOrEqual(Math.floor(firstBefore + 1000 - after) - 1)
  expect(waitMs).toBeLessThanOrEqual(Math.ceil(firstAfter + 1000 - before) + 1)
  // Another key has its own window.
  expect(refused(() => surface.throttle('other'))).toBeNull()
  // A second after the first 20, the key's calls are admitted again.
  await Bun.sleep(waitMs + 5)
  expect(refused(() => surface.throttle('k'))).toBeNull()
})

test('SlidingLog: never more than the limit in any window, a burst at once, refused calls not recorded', () => {
  const log = new SlidingLog({ limit: 3, windowMs: 1000, maxKeys: 10 })
  const admitted: number[] = []
  // A call every 100 ms for 5 s: exactly 3 in any 1,000 ms.
  for (let t = 0; t < 5000; t += 100) if (log.take('k', t) === 0) admitted.push(t)
  for (const t of admitted)
    expect(admitted.filter((u) => u >= t && u < t + 1000).length).toBeLessThanOrEqual(3)
  expect(admitted.slice(0, 6)).toEqual([0, 100, 200, 1000, 1100, 1200])
  expect(log.take('b', 0) + log.take('b', 0) + log.take('b', 0)).toBe(0)
  expect(log.take('b', 999)).toBe(1)
})

test('SlidingLog: a client cycling keys keeps it at maxKeys, and idle keys are forgotten', () => {
  const log = new SlidingLog({ limit: 20, windowMs: 1000, maxKeys: 1000 })
  for (let i = 0; i < 100_000; i++) log.take(`key-${i}`, i / 100) // 100,000 keys within one second
  expect(log.size).toBeLessThanOrEqual(1000)
  // Two windows later every key is idle: one key's calls are all that is left.
  log.take('steady', 2000)
  log.take('steady', 3001)
  expect(log.size).toBe(1)
})

test('SlidingLog: a key called in the last window is kept across a turn of the generations', () => {
  const log = new SlidingLog({ limit: 2, windowMs: 1000, maxKeys: 100 })
  expect(log.take('k', 900) + log.take('k', 950)).toBe(0)
  expect(log.take('other', 1000)).toBe(0) // the generations turn here
  expect(log.take('k', 1100)).toBe(800) // k's calls at 900 and 950 are still in its window
  expect(log.take('k', 1900)).toBe(0)
})
