/**
 * @module
 * Smooth weighted round-robin (nginx's upstream algorithm): each pick adds every eligible item's
 * weight to its running score, takes the highest score (the first on a tie) and takes the total of
 * the weights added off it. Deterministic: weights 3 and 1 give exactly three picks of the first in
 * every four, interleaved (a, a, b, a) rather than in runs. One implementation for the key pools
 * (providers/resilience/key-pool.ts) and the catalogue's virtual models (catalogue/aliases.ts).
 *
 * @example
 * const rr = new SmoothRoundRobin([3, 1])
 * rr.pick() // 0, then 0, 1, 0, 0, 0, 1, 0 …
 * rr.pick((i) => i !== 0) // 1: only the items `eligible` passes take part
 */
export class SmoothRoundRobin {
  /** Each item's weight, at least 1. */
  readonly weights: readonly number[]
  /** The running scores. */
  private readonly current: number[]

  constructor(weights: readonly number[]) {
    this.weights = weights.map((w) => Math.max(1, w))
    this.current = weights.map(() => 0)
  }

  /** The next item's index among those `eligible` passes (all when absent); null when none does. */
  pick(eligible?: (index: number) => boolean): number | null {
    let best = -1
    let total = 0
    for (let i = 0; i < this.weights.length; i++) {
      if (eligible && !eligible(i)) continue
      this.current[i]! += this.weights[i]!
      total += this.weights[i]!
      if (best === -1 || this.current[i]! > this.current[best]!) best = i
    }
    if (best === -1) return null
    this.current[best]! -= total
    return best
  }
}
