/**
 * Issue 46 (what a plain request allocates, stop 62): a request answered by its first attempt on a
 * one-key model with no fallbacks made three `Set`s in its attempt plan (the keys tried, the targets
 * skipped, and `tryKeys`' copy of the first) and one more in `fallbacksOf`, each with its storage,
 * none of them ever holding anything. Counted with JSC's cell counts: no timing. What the sets hold
 * once something fails is the plan's own tests' (attempt-plan.test.ts).
 */
import { heapStats } from 'bun:jsc'
import { expect, test } from 'bun:test'
import type { CatalogueEntry } from '../../../src/catalogue/entry.ts'
import { fallbacksOf } from '../../../src/catalogue/reach.ts'
import type { ModelConfig, ProviderConfig } from '../../../src/config/schema.ts'
import { AttemptPlan, type Target } from '../../../src/providers/resilience/attempt-plan.ts'
import { CircuitBoard } from '../../../src/providers/resilience/circuit.ts'
import { KeyPool } from '../../../src/providers/resilience/key-pool.ts'
import { DEFAULT_RETRY } from '../../../src/providers/resilience/retry-wait.ts'
import { ManualClock } from '../../../src/util/clock.ts'

const N = 100
const sets = () => heapStats().objectTypeCounts.Set ?? 0

test("a plan whose first attempt answers makes no Set, nor a lone model's fallbacks", () => {
  const clock = new ManualClock(1_000_000)
  const board = new CircuitBoard(clock)
  const model = {
    name: 'm',
    context_window: 8192,
    max_output_tokens: 1024,
    features: [],
  } as unknown as ModelConfig
  const target: Target = {
    id: 'p/m',
    provider: { prefix: 'p', kind: 'openai', models: [] } as unknown as ProviderConfig,
    model,
    pool: new KeyPool([{ apiKey: 'k', weight: 1 }], clock).forModel('m'),
    retry: { ...DEFAULT_RETRY },
    circuit: { failures: 3, cooldownMs: 30_000 },
  }
  const entry = { id: 'p/m', model } as unknown as CatalogueEntry
  const answer = () => {
    const plan = new AttemptPlan([target], { board, clock })
    const step = plan.next()
    if (!('attempt' in step)) throw new Error('no attempt')
    plan.succeeded()
    return fallbacksOf(
      entry,
      [entry],
      () => undefined,
      () => true,
    )
  }
  // Warm: the circuit is made on the first attempt, and the code optimised.
  for (let i = 0; i < 2_000; i++) answer()
  Bun.gc(true)
  const before = sets()
  for (let i = 0; i < N; i++) expect(answer()).toEqual([])
  // Before: four a request (≥ 400).
  expect(sets() - before).toBeLessThan(N / 2)
})
