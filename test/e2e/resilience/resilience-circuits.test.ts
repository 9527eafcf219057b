/**
 * Circuits and key pools over time (DESIGN §10), through the real gateway and the fault upstream,
 * at a small scale (a cooldown of 1 s, requests every 100 ms): a primary that is down costs a
 * handful of attempts, not one per request, every request is answered by the fallback meanwhile,
 * and traffic returns to the primary once a probe finds it up. Keys: a long `retry-after` sends
 * the pool to its other key at once and keeps it there.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ManualClock } from '../../../src/util/clock.ts'
import { beforeEach } from '../../support/hooks.ts'
import { readStream } from '../../support/read-stream.ts'
import { type ResilienceBed, startResilienceBed } from '../../support/resilience-bed.ts'

const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 4096,
  features: ['streaming', 'system_messages'],
  ...extra,
})
const FAST = {
  retry: { attempts: 1, backoff_ms: 20, max_backoff_ms: 40 },
  circuit: { failures: 2, cooldown_s: 1 },
}
const SOLO_COOLDOWN_S = 30

let bed: ResilienceBed
beforeAll(async () => {
  bed = await startResilienceBed({
    providers: (url) => [
      {
        prefix: 'one',
        kind: 'openai',
        base_url: `${url}/v1`,
        api_key: 'sk-one-0001',
        ...FAST,
        models: [model('m1', { fallbacks: ['two/m2'] })],
      },
      {
        prefix: 'two',
        kind: 'openai',
        base_url: `${url}/v1`,
        api_key: 'sk-two-0002',
        ...FAST,
        models: [model('m2')],
      },
      {
        prefix: 'pool',
        kind: 'openai',
        base_url: `${url}/v1`,
        keys: [{ api_key: 'sk-pool-a' }, { api_key: 'sk-pool-b' }],
        ...FAST,
        models: [model('p1')],
      },
      {
        prefix: 'solo',
        kind: 'openai',
        base_url: `${url}/v1`,
        api_key: 'sk-solo-0003',
        ...FAST,
        // A cooldown no request reaches by itself: the test that opens this circuit moves a
        // ManualClock past it (a 1 s cooldown ran out under 4 requests at load 20).
        circuit: { failures: 2, cooldown_s: SOLO_COOLDOWN_S },
        models: [model('s1')],
      },
    ],
  })
})
afterAll(() => bed.stop())
beforeEach(() => bed.reset())

test('a primary down for 1.5 s under a request every 100 ms: a handful of attempts, all answered, then back', async () => {
  bed.up.script({ model: 'm1' }, 'unavailable')
  const t0 = performance.now()
  const answeredBy: Array<[number, string]> = []
  let upAt = 0
  let downFor = 0
  const backOnM1 = () => answeredBy.slice(downFor).filter(([, m]) => m === 'one/m1').length
  // Down for 1.5 s and 8 requests at least, then up for 1.5 s and until the primary has answered 5
  // (10 s at most): a loaded machine (load 27) sent 2 requests in 1.5 s, and a probe failing just
  // before the primary came up keeps it skipped a cooldown more. The counts are the machine's, the
  // bound on attempts the gateway's.
  while (
    !upAt ||
    ((performance.now() - upAt < 1_500 || backOnM1() < 5) && performance.now() - upAt < 10_000)
  ) {
    if (!upAt && performance.now() - t0 >= 1_500 && answeredBy.length >= 8) {
      bed.up.script({ model: 'm1' }, 'ok')
      upAt = performance.now()
      downFor = answeredBy.length
    }
    const res = await bed.post('chat', 'one/m1')
    expect(res.status).toBe(200)
    answeredBy.push([performance.now() - t0, ((await res.json()) as any).model])
    await Bun.sleep(100)
  }
  const whileDown = bed.up.attempts({ model: 'm1' }).filter((a) => a.fault === 'unavailable')
  // Two to open the circuit, then one probe per cooldown (1 s): not one per request (a quiet
  // machine sends 12–14 requests in the 1.5 s down, and its bound is 5 as it was).
  expect(whileDown.length).toBeLessThanOrEqual(3 + Math.ceil((upAt - t0) / 1_000))
  expect(whileDown.length).toBeLessThan(downFor)
  // After a probe finds it up, the primary answers again, every request.
  const after = answeredBy.slice(downFor).map(([, m]) => m)
  const back = after.indexOf('one/m1')
  expect(back).toBeGreaterThanOrEqual(0)
  expect(after.slice(back)).toEqual(after.slice(back).map(() => 'one/m1'))
  expect(after.length - back).toBeGreaterThanOrEqual(5)
  const metrics = await (await fetch(`${bed.gw.url}/metrics`)).text()
  expect(metrics).toContain('switchyard_circuit_state{provider="one",key="#0",model="m1"} 0')
  expect(metrics).toMatch(
    /switchyard_upstream_attempts_total\{provider="one",model="m1",outcome="transient"\} \d/,
  )
})

test('a key answering 429 with a long retry-after is passed over at once, and stays passed over', async () => {
  bed.up.script({ key: 'sk-pool-a' }, { fault: 'rate_limited', retryAfter: '60' })
  const t0 = performance.now()
  for (let i = 0; i < 4; i++) expect((await bed.post('chat', 'pool/p1')).status).toBe(200)
  // Not the 60 s retry-after, nor a wait of any length (4 requests took 1.3 s at load 27).
  expect(performance.now() - t0).toBeLessThan(5_000)
  expect(bed.up.attempts({ key: 'sk-pool-a' })).toHaveLength(1)
  expect(bed.up.attempts({ key: 'sk-pool-b' })).toHaveLength(4)
})

test("a pool key failing until its circuit opens: the retry goes to the pool's other key, every request answered", async () => {
  bed.up.script({ key: 'sk-pool-a' }, 'unavailable')
  for (let i = 0; i < 4; i++) {
    const res = await bed.post('chat', 'pool/p1', { stream: i % 2 === 1 })
    expect([i, res.status]).toEqual([i, 200])
    await res.text()
  }
  // Key #0 fails twice (circuit.failures: 2) and is then skipped; key #1 answers every request.
  expect(bed.up.attempts({ key: 'sk-pool-a' })).toHaveLength(2)
  expect(bed.up.attempts({ key: 'sk-pool-b' })).toHaveLength(4)
})

test('no fallback: while its circuit is open the model is not called — 503 upstream_circuit_open at once with retry-after — then one probe, and back', async () => {
  // The circuits' clock is the test's: the cooldown lasts until the test moves it, however long
  // the requests inside it take on a loaded machine.
  const clock = new ManualClock()
  bed.reset(clock)
  bed.up.script({ model: 's1' }, 'unavailable')
  // One try and one retry (retry.attempts: 1): two failures open the circuit (circuit.failures: 2).
  const first = await bed.post('chat', 'solo/s1')
  expect(first.status).toBe(503)
  expect(((await first.json()) as any).error.code).toBe('upstream_overloaded')
  expect(bed.up.attempts({ model: 's1' })).toHaveLength(2)
  for (const [surface, stream] of [
    ['chat', false],
    ['chat', true],
    ['responses', false],
    ['messages', true],
  ] as const) {
    const t0 = performance.now()
    const res = await bed.post(surface, 'solo/s1', { stream })
    const body = (await res.json()) as any
    expect([surface, stream, res.status]).toEqual([surface, stream, surface === 'messages' ? 529 : 503])
    expect(surface === 'messages' ? body.error.type : body.error.code).toBe(
      surface === 'messages' ? 'overloaded_error' : 'upstream_circuit_open',
    )
    expect(res.headers.get('retry-after')).toBe(String(SOLO_COOLDOWN_S))
    expect(res.headers.get('x-switchyard-attempts')).toBe('0')
    // At once: not a wait for the cooldown (30 s) nor any wait, with a loaded machine's room.
    expect(performance.now() - t0).toBeLessThan(5_000)
  }
  // Skipped for the cooldown: not one more call.
  expect(bed.up.attempts({ model: 's1' })).toHaveLength(2)
  clock.advance(SOLO_COOLDOWN_S * 1000 - 1)
  expect((await bed.post('chat', 'solo/s1')).status).toBe(503)
  expect(bed.up.attempts({ model: 's1' })).toHaveLength(2)
  clock.advance(1)
  bed.up.script({ model: 's1' }, 'ok')
  // The cooldown over, one probe goes through; its success closes the circuit.
  const probe = await bed.post('chat', 'solo/s1')
  expect(probe.status).toBe(200)
  await probe.text()
  expect((await bed.post('chat', 'solo/s1')).status).toBe(200)
  expect(bed.up.attempts({ model: 's1' })).toHaveLength(4)
})

/** A counter's value in /metrics now (0 when absent). */
async function metric(line: string): Promise<number> {
  const text = await (await fetch(`${bed.gw.url}/metrics`)).text()
  const found = text.split('\n').find((l) => l.startsWith(`${line} `))
  return found ? Number(found.slice(line.length + 1)) : 0
}

for (const wire of ['chat', 'messages', 'responses'] as const) {
  test(`${wire}: streams cut after content count against the circuit; it opens and the fallback answers whole`, async () => {
    const cuts = 'switchyard_upstream_attempts_total{provider="one",model="m1",outcome="transient"}'
    const before = await metric(cuts)
    // m1 starts every stream, then the connection is cut; m2 cannot continue it (no prefill).
    bed.up.script({ model: 'm1' }, { fault: 'cut', after: 3 })
    for (let i = 0; i < 2; i++) {
      const res = await bed.post(wire, 'one/m1', { stream: true })
      expect(readStream(wire, await res.text())).toMatchObject({ complete: false })
    }
    // Two failures in a row (circuit.failures: 2): the primary is skipped for the cooldown.
    const res = await bed.post(wire, 'one/m1', { stream: true })
    expect(readStream(wire, await res.text())).toMatchObject({
      model: 'two/m2',
      text: bed.up.answer(),
      complete: true,
    })
    expect(bed.up.attempts({ model: 'm1' })).toHaveLength(2)
    expect(await metric('switchyard_circuit_state{provider="one",key="#0",model="m1"}')).toBe(2)
    expect((await metric(cuts)) - before).toBe(2)
  })
}
