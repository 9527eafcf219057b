/**
 * One request's way through its targets: retries, waits, key rotation, fail-over, circuits and the
 * continuation target, on a manual clock (each `wait` step is served by advancing it).
 */
import { describe, expect, test } from 'bun:test'
import type { ModelConfig, ProviderConfig } from '../../../src/config/schema.ts'
import { AttemptPlan, type Step, type Target } from '../../../src/providers/resilience/attempt-plan.ts'
import { CircuitBoard } from '../../../src/providers/resilience/circuit.ts'
import type { FailureKind } from '../../../src/providers/resilience/failure-kinds.ts'
import { KeyPool } from '../../../src/providers/resilience/key-pool.ts'
import { DEFAULT_RETRY } from '../../../src/providers/resilience/retry-wait.ts'
import { ManualClock } from '../../../src/util/clock.ts'

function world() {
  const clock = new ManualClock(1_000_000)
  const board = new CircuitBoard(clock)
  const pools = new Map<string, KeyPool>()
  const target = (
    id: string,
    opts: { keys?: number; features?: string[]; window?: number; kind?: string } = {},
  ): Target => {
    const [prefix, name] = id.split('/') as [string, string]
    let pool = pools.get(prefix)
    if (!pool) {
      pool = new KeyPool(
        Array.from({ length: opts.keys ?? 1 }, (_, i) => ({ apiKey: `${prefix}-${i}`, weight: 1 })),
        clock,
      )
      pools.set(prefix, pool)
    }
    return {
      id,
      provider: { prefix, kind: opts.kind ?? 'openai', models: [] } as unknown as ProviderConfig,
      model: {
        name,
        context_window: opts.window ?? 8192,
        max_output_tokens: 1024,
        features: opts.features ?? ['streaming'],
      } as ModelConfig,
      pool: pool.forModel(name),
      retry: { ...DEFAULT_RETRY },
      circuit: { failures: 3, cooldownMs: 30_000 },
    }
  }
  const plan = (targets: Target[]) => new AttemptPlan(targets, { board, clock, random: () => 0 })
  return { clock, board, target, plan }
}

/** Runs a plan to its end: each attempt fails with the next outcome (or succeeds on 'ok'); waits advance the clock. */
function run(
  w: ReturnType<typeof world>,
  p: AttemptPlan,
  outcomes: Array<'ok' | FailureKind | [FailureKind, number]>,
): { log: string[]; end: Step } {
  const log: string[] = []
  for (let i = 0; ; ) {
    const step = p.next()
    if ('stop' in step) return { log, end: step }
    if ('wait' in step) {
      log.push(`wait ${step.wait}`)
      w.clock.advance(step.wait)
      continue
    }
    const a = step.attempt
    log.push(`${a.target.id}#${a.key.index}${a.probe ? ' probe' : ''}`)
    const o = outcomes[i++] ?? 'ok'
    if (o === 'ok') {
      p.succeeded()
      return { log, end: step }
    }
    const [kind, retryAfter] = Array.isArray(o) ? o : [o, null]
    p.failed(kind, retryAfter)
  }
}

describe('AttemptPlan', () => {
  test('the happy path: one attempt on the primary', () => {
    const w = world()
    const p = w.plan([w.target('a/m'), w.target('b/m')])
    expect(run(w, p, ['ok']).log).toEqual(['a/m#0'])
    expect([p.attempts, p.target?.id]).toEqual([1, 'a/m'])
  })

  test('transient: retried on the same target after a jittered backoff, up to retry.attempts, then the fallback', () => {
    const w = world()
    const p = w.plan([w.target('a/m'), w.target('b/m')])
    const { log } = run(w, p, ['transient', 'transient', 'transient', 'ok'])
    expect(log).toEqual(['a/m#0', 'wait 125', 'a/m#0', 'wait 250', 'a/m#0', 'b/m#0'])
    expect(p.target?.id).toBe('b/m')
  })

  test('a 500 once costs one retry; failures with nothing left end as exhausted', () => {
    const w = world()
    expect(run(w, w.plan([w.target('a/m')]), ['transient', 'ok']).log).toEqual(['a/m#0', 'wait 125', 'a/m#0'])
    const w2 = world()
    const { log, end } = run(w2, w2.plan([w2.target('a/m')]), ['transient', 'transient', 'transient'])
    expect(log.filter((l) => l.startsWith('a/m'))).toHaveLength(3)
    expect(end).toEqual({ stop: 'exhausted' })
  })

  test('rate limited with a retry-after within max_retry_after_s: that wait, then the same key', () => {
    const w = world()
    const { log } = run(w, w.plan([w.target('a/m'), w.target('b/m')]), [['rate_limited', 2000], 'ok'])
    expect(log).toEqual(['a/m#0', 'wait 2000', 'a/m#0'])
  })

  test('rate limited with a long retry-after: the fallback at once; the next request passes the resting key over too', () => {
    const w = world()
    const targets = [w.target('a/m'), w.target('b/m')]
    expect(run(w, w.plan(targets), [['rate_limited', 60_000], 'ok']).log).toEqual(['a/m#0', 'b/m#0'])
    expect(run(w, w.plan(targets), ['ok']).log).toEqual(['b/m#0'])
    w.clock.advance(60_000)
    expect(run(w, w.plan(targets), ['ok']).log).toEqual(['a/m#0'])
  })

  test('rate limited without retry-after: a backoff, never a tight loop', () => {
    const w = world()
    expect(run(w, w.plan([w.target('a/m')]), ['rate_limited', 'ok']).log).toEqual([
      'a/m#0',
      'wait 125',
      'a/m#0',
    ])
  })

  test('a key pool: a dead key (401) is tried once, rests the cooldown, and the next key answers at once', () => {
    const w = world()
    const a = w.target('a/m', { keys: 2 })
    expect(run(w, w.plan([a]), ['credential', 'ok']).log).toEqual(['a/m#0', 'a/m#1'])
    for (let i = 0; i < 4; i++) expect(run(w, w.plan([a]), ['ok']).log).toEqual(['a/m#1'])
    w.clock.advance(30_000)
    expect(new Set([run(w, w.plan([a]), ['ok']).log[0], run(w, w.plan([a]), ['ok']).log[0]])).toEqual(
      new Set(['a/m#0', 'a/m#1']),
    )
  })

  test('a key pool: a key answering 429 with a long retry-after is passed over at once', () => {
    const w = world()
    const a = w.target('a/m', { keys: 2 })
    expect(run(w, w.plan([a]), [['rate_limited', 3_600_000], 'ok']).log).toEqual(['a/m#0', 'a/m#1'])
  })

  test('every key dead: fail over; quota on the last key likewise', () => {
    const w = world()
    const a = w.target('a/m', { keys: 2 })
    expect(run(w, w.plan([a, w.target('b/m')]), ['credential', 'credential', 'ok']).log).toEqual([
      'a/m#0',
      'a/m#1',
      'b/m#0',
    ])
  })

  test('a key resting on a cooldown is not waited for, however soon it wakes: the fallback at once', () => {
    const w = world()
    const a = w.target('a/m', { keys: 2 })
    const b = w.target('b/m')
    expect(run(w, w.plan([a, b]), ['credential', 'credential', 'ok']).log).toEqual([
      'a/m#0',
      'a/m#1',
      'b/m#0',
    ])
    // 1 s of the 30 s cooldown left, within max_retry_after_s (10 s): still not a wait.
    w.clock.advance(29_000)
    expect(run(w, w.plan([a, b]), ['ok']).log).toEqual(['b/m#0'])
    // A rate-limited key, by contrast, is waited for when its retry-after is that soon.
    const w2 = world()
    const c = w2.target('c/m')
    expect(run(w2, w2.plan([c, w2.target('d/m')]), [['rate_limited', 1_000], 'ok']).log).toEqual([
      'c/m#0',
      'wait 1000',
      'c/m#0',
    ])
  })

  test('silent: the fallback at once, the silent target never again for this request', () => {
    const w = world()
    const { log } = run(w, w.plan([w.target('a/m'), w.target('b/m')]), [
      'silent',
      'transient',
      'transient',
      'transient',
    ])
    expect(log).toEqual(['a/m#0', 'b/m#0', 'wait 125', 'b/m#0', 'wait 250', 'b/m#0'])
  })

  test('slow first token: a fallback if there is one (hasFallback says so), never the slow target again', () => {
    const w = world()
    const p = w.plan([w.target('a/m'), w.target('b/m')])
    const s = p.next()
    expect('attempt' in s && p.hasFallback()).toBe(true)
    p.failed('slow_first_token')
    const s2 = p.next()
    expect('attempt' in s2 && s2.attempt.target.id).toBe('b/m')
    expect(p.hasFallback()).toBe(false)
  })

  test('hasFallback: not a fallback whose circuits are all open or whose keys all rest (a slow first token is then waited on)', () => {
    const w = world()
    const a = w.target('a/m')
    const b = w.target('b/m')
    const p = w.plan([a, b])
    p.next()
    expect(p.hasFallback()).toBe(true)
    const circuit = w.board.get({ provider: 'b', key: 0, model: 'm' }, b.circuit)
    for (let i = 0; i < 3; i++) circuit.failure()
    expect(p.hasFallback()).toBe(false)
    // After the cooldown its probe may be tried: a fallback again.
    w.clock.advance(30_000)
    expect(p.hasFallback()).toBe(true)
    b.pool.rest(0, 60_000)
    expect(p.hasFallback()).toBe(false)
  })

  test('the request’s own fault and a content-policy refusal stop at once: the answer is that error', () => {
    for (const kind of ['request_fault', 'content_policy'] as const) {
      const w = world()
      const { log, end } = run(w, w.plan([w.target('a/m'), w.target('b/m')]), [kind])
      expect([log, end]).toEqual([['a/m#0'], { stop: 'final' }])
    }
  })

  test('context overflow: only to a fallback with a larger window', () => {
    const w = world()
    const targets = [
      w.target('a/m', { window: 128_000 }),
      w.target('b/small', { window: 32_000 }),
      w.target('c/big', { window: 1_000_000 }),
    ]
    expect(run(w, w.plan(targets), ['context_overflow', 'ok']).log).toEqual(['a/m#0', 'c/big#0'])
    const w2 = world()
    const end = run(
      w2,
      w2.plan([w2.target('a/m', { window: 128_000 }), w2.target('b/small', { window: 32_000 })]),
      ['context_overflow'],
    ).end
    expect(end).toEqual({ stop: 'exhausted' })
  })

  test("the gateway's own fault (internal): no retry, no other key, only to a fallback of another provider kind; no circuit failure", () => {
    const w = world()
    const targets = [
      w.target('a/m', { keys: 2 }),
      w.target('b/same', { kind: 'openai' }),
      w.target('c/other', { kind: 'anthropic' }),
    ]
    expect(run(w, w.plan(targets), ['internal', 'ok']).log).toEqual(['a/m#0', 'c/other#0'])
    // Failing so every time, the circuit never opens: the next request still starts on the primary.
    for (let i = 0; i < 5; i++) run(w, w.plan(targets), ['internal', 'ok'])
    expect(run(w, w.plan(targets), ['ok']).log).toEqual(['a/m#0'])
    const w2 = world()
    const end = run(w2, w2.plan([w2.target('a/m', { keys: 2 }), w2.target('b/same')]), ['internal']).end
    expect(end).toEqual({ stop: 'exhausted' })
  })

  test('circuits: a primary failing opens after 3 failures; requests then go straight to the fallback; one probe after the cooldown; its success brings traffic back', () => {
    const w = world()
    const targets = [w.target('a/m'), w.target('b/m')]
    // one request: three transient failures on a/m, answered by b/m
    expect(
      run(w, w.plan(targets), ['transient', 'transient', 'transient', 'ok']).log.filter(
        (l) => !l.startsWith('wait'),
      ),
    ).toEqual(['a/m#0', 'a/m#0', 'a/m#0', 'b/m#0'])
    // open: no attempt on a/m at all
    for (let i = 0; i < 5; i++) expect(run(w, w.plan(targets), ['ok']).log).toEqual(['b/m#0'])
    w.clock.advance(30_000)
    const probe = w.plan(targets)
    const s = probe.next()
    expect('attempt' in s && [s.attempt.target.id, s.attempt.probe]).toEqual(['a/m', true])
    // while the probe is out, other requests skip a/m
    expect(run(w, w.plan(targets), ['ok']).log).toEqual(['b/m#0'])
    probe.succeeded()
    expect(run(w, w.plan(targets), ['ok']).log).toEqual(['a/m#0'])
  })

  test('a stream is judged at its end: cuts after content open the circuit; a stream that ends well closes it', () => {
    const w = world()
    const a = w.target('a/m')
    const b = w.target('b/m')
    for (let i = 0; i < 3; i++) {
      const p = w.plan([a, b])
      const step = p.next()
      expect('attempt' in step && step.attempt.target.id).toBe('a/m')
      p.streaming()('transient')
    }
    expect(run(w, w.plan([a, b]), ['ok']).log).toEqual(['b/m#0'])
    w.clock.advance(30_000)
    const p = w.plan([a, b])
    const step = p.next()
    expect('attempt' in step && step.attempt.probe).toBe(true)
    const verdict = p.streaming()
    // While the probe's stream runs, the circuit is still half-open: others go to the fallback.
    expect(run(w, w.plan([a, b]), ['ok']).log).toEqual(['b/m#0'])
    verdict(null)
    expect(run(w, w.plan([a, b]), ['ok']).log).toEqual(['a/m#0'])
  })

  test("a failure that opens one key's circuit is retried on another key of the pool, not failed over", () => {
    const w = world()
    const a = w.target('a/m', { keys: 2 })
    const key0 = w.board.get({ provider: 'a', key: 0, model: 'm' }, a.circuit)
    key0.failure()
    key0.failure()
    // Key #0's third failure opens its circuit; key #1's is closed: the retry goes there.
    const { log, end } = run(w, w.plan([a]), ['transient', 'ok'])
    expect(log).toEqual(['a/m#0', 'wait 125', 'a/m#1'])
    expect('attempt' in end).toBe(true)
  })

  test("a failure that opens one key's circuit fails over at once when the pool's other key is half-open with its probe out", () => {
    const w = world()
    const a = w.target('a/m', { keys: 2 })
    const b = w.target('b/m')
    const key0 = w.board.get({ provider: 'a', key: 0, model: 'm' }, a.circuit)
    const key1 = w.board.get({ provider: 'a', key: 1, model: 'm' }, a.circuit)
    for (let i = 0; i < 3; i++) key1.failure()
    w.clock.advance(30_000)
    // Another request holds key #1's one probe.
    expect(key1.admit()).toBe('probe')
    key0.failure()
    key0.failure()
    // Key #0's third failure opens its circuit; key #1 can take no retry while its probe is out:
    // no backoff for a retry that would only be skipped, and no second probe on key #1.
    expect(run(w, w.plan([a, b]), ['transient', 'ok']).log).toEqual(['a/m#0', 'b/m#0'])
  })

  test("a failure that opens one key's circuit is retried as the probe of the pool's other key when that one is free", () => {
    const w = world()
    const a = w.target('a/m', { keys: 2 })
    const b = w.target('b/m')
    const key0 = w.board.get({ provider: 'a', key: 0, model: 'm' }, a.circuit)
    const key1 = w.board.get({ provider: 'a', key: 1, model: 'm' }, a.circuit)
    for (let i = 0; i < 3; i++) key1.failure()
    w.clock.advance(30_000)
    key0.failure()
    key0.failure()
    expect(run(w, w.plan([a, b]), ['transient', 'ok']).log).toEqual(['a/m#0', 'wait 125', 'a/m#1 probe'])
  })

  test('last resort: every key resting, one attempt on the primary anyway (its key that wakes first)', () => {
    const w = world()
    const a = w.target('a/m', { keys: 2 })
    a.pool.rest(0, 600_000)
    a.pool.rest(1, 300_000)
    const p = w.plan([a])
    expect(p.next()).toEqual({ stop: 'exhausted' })
    expect(p.lastResort()).toMatchObject({ target: { id: 'a/m' }, key: { index: 1 }, probe: false, n: 1 })
    expect(p.circuitsOpen()).toBeNull()
  })

  test('last resort: an open circuit is skipped — the next target with one that admits, else nothing and until when', () => {
    const w = world()
    const a = w.target('a/m')
    const b = w.target('b/m')
    // Three transient failures (one try, two retries) open a/m's circuit (failures: 3).
    run(w, w.plan([a]), ['transient', 'transient', 'transient'])
    const opened = w.clock.now()
    // a/m's circuit open, b/m's key resting: b/m gets the one attempt.
    b.pool.rest(0, 600_000)
    const p = w.plan([a, b])
    expect(p.next()).toEqual({ stop: 'exhausted' })
    expect(p.lastResort()).toMatchObject({ target: { id: 'b/m' }, n: 1 })
    // a/m alone: nothing is called; its circuit lets a request through at the cooldown's end.
    const q = w.plan([a])
    expect(q.next()).toEqual({ stop: 'exhausted' })
    expect(q.lastResort()).toBeNull()
    expect(q.circuitsOpen()).toEqual({ until: opened + 30_000, model: 'a/m' })
    // After the cooldown the plan's own probe goes first; the last resort is never needed.
    w.clock.advance(30_000)
    expect(run(w, w.plan([a]), ['ok']).log).toEqual(['a/m#0 probe'])
  })

  test('a failed probe keeps the circuit open another cooldown', () => {
    const w = world()
    const targets = [w.target('a/m'), w.target('b/m')]
    run(w, w.plan(targets), ['transient', 'transient', 'transient', 'ok'])
    w.clock.advance(30_000)
    expect(run(w, w.plan(targets), ['transient', 'ok']).log).toEqual(['a/m#0 probe', 'b/m#0'])
    w.clock.advance(29_000)
    expect(run(w, w.plan(targets), ['ok']).log).toEqual(['b/m#0'])
  })

  test('continuation: the first later target with prefill, once', () => {
    const w = world()
    const p = w.plan([
      w.target('a/m'),
      w.target('b/m'),
      w.target('c/m', { features: ['streaming', 'prefill'] }),
    ])
    const s = p.next()
    expect('attempt' in s).toBe(true)
    p.succeeded() // the stream started; it is cut later
    const c = p.continuation('transient')
    expect(c?.target.id).toBe('c/m')
    p.failed('transient')
    expect(p.continuation('transient')).toBeNull()
    const w2 = world()
    const p2 = w2.plan([w2.target('a/m'), w2.target('b/m')])
    p2.next()
    p2.succeeded()
    expect(p2.continuation('transient')).toBeNull()
  })

  test("continuation follows the failure kind's row: internal only on another provider kind, never none", () => {
    const w = world()
    const targets = () => [
      w.target('a/m'),
      w.target('b/same', { features: ['streaming', 'prefill'] }),
      w.target('c/other', { features: ['streaming', 'prefill'], kind: 'anthropic' }),
    ]
    const started = (p: ReturnType<typeof w.plan>) => {
      p.next()
      p.succeeded()
      return p
    }
    expect(started(w.plan(targets())).continuation('transient')?.target.id).toBe('b/same')
    expect(started(w.plan(targets())).continuation('internal')?.target.id).toBe('c/other')
    expect(started(w.plan(targets())).continuation('request_fault')).toBeNull()
    const same = started(w.plan([w.target('a/m'), w.target('b/same', { features: ['prefill'] })]))
    expect(same.continuation('internal')).toBeNull()
  })

  test('bounded: with every target failing, attempts ≤ Σ(1 + retry.attempts) and every wait ≤ max(max_backoff_ms, max_retry_after_s)', () => {
    const w = world()
    const targets = [w.target('a/m', { keys: 3 }), w.target('b/m'), w.target('c/m')]
    const kinds: FailureKind[] = ['transient', 'rate_limited', 'credential', 'silent']
    const outcomes = Array.from({ length: 100 }, (_, i) => kinds[i % kinds.length]!)
    const { log, end } = run(w, w.plan(targets), outcomes)
    expect(end).toEqual({ stop: 'exhausted' })
    expect(log.filter((l) => !l.startsWith('wait')).length).toBeLessThanOrEqual(
      3 * (1 + DEFAULT_RETRY.attempts) + 2,
    )
    for (const l of log.filter((x) => x.startsWith('wait')))
      expect(Number(l.slice(5))).toBeLessThanOrEqual(10_000)
  })
})
