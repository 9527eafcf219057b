/**
 * @module
 * What the attempt loop needs to survive a misbehaving upstream (DESIGN §10): failure kinds and
 * the action table, waits before a retry, key pools, circuits.
 */

export { type Attempt, AttemptPlan, type PlanDeps, type Step, type Target } from './attempt-plan.ts'
export {
  CircuitBoard,
  type CircuitPolicy,
  type CircuitState,
  type CircuitTarget,
  DEFAULT_CIRCUIT,
} from './circuit.ts'
export {
  ACTIONS,
  type Action,
  AFTER_CONTENT,
  classify,
  FAILURE_KINDS,
  type FailureFacts,
  type FailureKind,
  type TransportFault,
} from './failure-kinds.ts'
export { KeyPool, type KeySpec, type PoolKey } from './key-pool.ts'
export { poolKeys, resolveCircuit, resolveRetry } from './policy.ts'
export { Resilience } from './resilience.ts'
export { backoffMs, DEFAULT_RETRY, type RetryPolicy, retryAfterMs, waitsFor } from './retry-wait.ts'
