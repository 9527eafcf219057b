/**
 * @module
 * Prints the slowest test files of a run from the per-file durations `bun test --timings=FILE
 * --update-timings` writes (`{ "version": 1, "files": { "test/x.test.ts": ms } }`), with their
 * share of the summed time. CI runs it after the suite (.ci/run), so the files that dominate are
 * named in every log.
 *
 * @example
 * bun test/support/slowest-files.ts /tmp/timings.json 10
 */
import { readFileSync } from 'node:fs'

export function slowestFiles(timings: { files: Record<string, number> }, n: number): string[] {
  const rows = Object.entries(timings.files).sort((a, b) => b[1] - a[1])
  const total = rows.reduce((s, [, ms]) => s + ms, 0)
  const width = Math.max(0, ...rows.slice(0, n).map(([f]) => f.length))
  return [
    `the ${Math.min(n, rows.length)} slowest of ${rows.length} test files (summed over files: ${(total / 1000).toFixed(1)} s):`,
    ...rows
      .slice(0, n)
      .map(
        ([f, ms]) =>
          `  ${f.padEnd(width)}  ${(ms / 1000).toFixed(1).padStart(6)} s  ${((100 * ms) / total).toFixed(1).padStart(4)} %`,
      ),
  ]
}

if (import.meta.main) {
  const [file, n = '10'] = process.argv.slice(2)
  if (!file) {
    console.error('usage: bun test/support/slowest-files.ts TIMINGS.json [N]')
    process.exit(2)
  }
  console.log(slowestFiles(JSON.parse(readFileSync(file, 'utf8')), Number(n)).join('\n'))
}
