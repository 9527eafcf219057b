/**
 * Issue 46 (the plain request, function by function): a body read's deadline armed a timer and an
 * abort listener of its own per request (~5 µs of a plain request's loop at c=1). Now one interval
 * watches every read in flight (pipeline/body-deadline.ts): a read arms no timer, and the deadline
 * and the drain's stop still fail a read that does not end.
 */
import { afterAll, expect, test } from 'bun:test'
import { readBodyText } from '../../src/pipeline/body.ts'
import { SWEEP_MS, within } from '../../src/pipeline/body-deadline.ts'

let armed = 0
const realTimeout = globalThis.setTimeout
const realInterval = globalThis.setInterval
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    // readBodyText arms its deadline before its first await: counted around the call alone.
    globalThis.setTimeout = ((...a: Parameters<typeof setTimeout>) => {
      armed++
      return realTimeout(...a)
    }) as typeof setTimeout
    globalThis.setInterval = ((...a: Parameters<typeof setInterval>) => {
      armed++
      return realInterval(...a)
    }) as typeof setInterval
    let reading: Promise<string>
    try {
      reading = readBodyText(req, 1 << 20, 60_000)
    } finally {
      globalThis.setTimeout = realTimeout
      globalThis.setInterval = realInterval
    }
    return new Response(await reading)
  },
})
afterAll(() => server.stop(true))

test('a declared body is read without a timer of its own', async () => {
  const n = 40
  for (let i = 0; i < n; i++) {
    const body = JSON.stringify({ i, text: 'x'.repeat(100) })
    const res = await fetch(`http://127.0.0.1:${server.port}/`, { method: 'POST', body })
    expect(await res.text()).toBe(body)
  }
  // Main armed one a read (40); the shared sweep at most once a second of reads.
  expect(armed).toBeLessThan(n / 2)
})

test('a read that does not end fails with the late error, not before its time', async () => {
  const late = new Error('late')
  const t0 = performance.now()
  const err = await within(
    new Promise<never>(() => {}),
    50,
    () => late,
    () => {},
  ).catch((e) => e)
  expect(err).toBe(late)
  expect(performance.now() - t0).toBeGreaterThanOrEqual(49)
  expect(SWEEP_MS).toBeLessThanOrEqual(1000)
})

test('the stop signal fails every read waiting on it with its reason, then calls onLate', async () => {
  const stop = new AbortController()
  const calls: string[] = []
  const reads = [1, 2].map((i) =>
    within(
      new Promise<never>(() => {}),
      60_000,
      () => new Error('late'),
      () => calls.push(`late ${i}`),
      stop.signal,
    ).catch((e) => e),
  )
  const other = within(
    Promise.resolve('done'),
    60_000,
    () => new Error('late'),
    () => calls.push('other'),
    stop.signal,
  )
  expect(await other).toBe('done')
  const reason = new Error('shutting down')
  stop.abort(reason)
  expect(await Promise.all(reads)).toEqual([reason, reason])
  expect(calls).toEqual(['late 1', 'late 2'])
  // A read begun after the stop fails at once.
  expect(
    await within(
      new Promise<never>(() => {}),
      60_000,
      () => 0,
      () => {},
      stop.signal,
    ).catch((e) => e),
  ).toBe(reason)
})
