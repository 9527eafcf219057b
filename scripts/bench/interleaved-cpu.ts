/**
 * @module
 * In-process micro-bench rounds shared by gate-micro.ts and gates-micro.ts: each subject's `run`
 * called `n` times a round, 25 rounds with the order reversed every other round, the first four
 * thrown away as warm-up; prints each subject's median µs of CPU a call (and the best).
 * @example
 * interleavedCpu('stream', subjects, 20_000, (s) => answer(s))
 */
const cpu = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

export function interleavedCpu<S extends { name: string }>(
  label: string,
  subjects: readonly S[],
  n: number,
  run: (s: S) => void,
): void {
  const out: Record<string, number[]> = {}
  for (let round = 0; round < 25; round++) {
    const order = round % 2 ? [...subjects].reverse() : subjects
    for (const s of order) {
      const t0 = cpu()
      for (let i = 0; i < n; i++) run(s)
      if (round < 4) continue // warm-up rounds
      const xs = out[s.name] ?? []
      out[s.name] = xs
      xs.push((cpu() - t0) / n)
    }
  }
  for (const [name, xs] of Object.entries(out)) {
    xs.sort((a, b) => a - b)
    console.log(
      `${label} ${name}: ${xs[xs.length >> 1]!.toFixed(2)} µs an answer (best ${xs[0]!.toFixed(2)}), 21 rounds of ${n}`,
    )
  }
}
