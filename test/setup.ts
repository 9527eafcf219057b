/**
 * @module
 * Preloaded by `bun test` (bunfig.toml). Bun ignores a `timeout` key in bunfig's `[test]`
 * section, so the 5 s default applied to every test; end-to-end tests start real servers and
 * subprocesses, which can take longer than that on a loaded 2-core CI machine.
 *
 * A `setDefaultTimeout` here reaches only the FIRST file of a run: Bun 1.4.4 puts the default
 * back to `--timeout`'s (5 s without it) before each later file, and a test registered then keeps
 * that limit. Past it Bun fails the test and SIGTERMs the processes it spawned ("killed 4 dangling
 * processes"): `bun test tokens-processes-postgres.test.ts tokens-processes-postgres-redis.test.ts`
 * failed so on 2026-11-30 — the second file's first test starts the engines and four gateways
 * (over 5 s loaded), its gateways stopped mid-start ("serve exited", empty stderr) and the file's
 * other tests on them. So every test file, the first too, is loaded with the call at its head (on its first line:
 * the file's line numbers are unchanged), run before the file registers a test; `npm test`'s
 * `--timeout 60000` says the same for `beforeEach`/`afterEach`, which this does not reach
 * (support/hooks.ts).
 */
import { afterAll } from 'bun:test'
import { removeTempDirs } from './support/config-doc.ts'
import { SUITE_TIMEOUT_MS } from './support/hooks.ts'

// Bun runs a preload's afterAll after each test file's own under --parallel (npm test), and once
// at the end of a run without it; Bun's test workers run no exit handler.
afterAll(removeTempDirs)

/** What every test file runs first: the suite's limit, whichever file of the run it is. */
const SUITE_TIMEOUT_HEAD = `import { setDefaultTimeout as __suiteTimeout } from 'bun:test';__suiteTimeout(${SUITE_TIMEOUT_MS});`

Bun.plugin({
  name: 'suite-timeout',
  setup(build) {
    build.onLoad({ filter: /\.test\.ts$/ }, async ({ path }) => ({
      contents: SUITE_TIMEOUT_HEAD + census(path) + (await Bun.file(path).text()),
      loader: 'ts',
    }))
  },
})

/** The module that counts gateway starts (support/starts.ts), by path: the census imports it from every file. */
const STARTS = new URL('./support/starts.ts', import.meta.url).pathname

/**
 * With SUITE_CPU=<file> set, each test file appends one JSON line to it when it ends: its path,
 * its wall time (ms) and the CPU its worker spent meanwhile, in clock ticks of 10 ms, from
 * /proc/self/stat: `ut`/`st` the worker's own, `cut`/`cst` what it reaped (its spawned gateways,
 * CLI commands, agents), and the gateways it started: `gateways` in the test process, `serves`
 * spawned (support/starts.ts). Daemons (PostgreSQL), a worker's shared Chromium and the file's
 * imports (evaluated before this head) are not in it. docs/benchmarks/suite-cpu.md, stop 59's
 * census.
 */
function census(path: string): string {
  if (!process.env.SUITE_CPU) return ''
  return [
    `import { afterAll as __cpuAfter } from 'bun:test';`,
    `import { appendFileSync as __cpuAppend, readFileSync as __cpuRead } from 'node:fs';`,
    `import { starts as __starts } from ${JSON.stringify(STARTS)};`,
    `const __cpu = () => __cpuRead('/proc/self/stat', 'utf8').split(') ')[1].split(' ').slice(11, 15).map(Number);`,
    `const __cpu0 = __cpu(), __cpuT0 = performance.now(), __gw0 = __starts.gateways, __serve0 = __starts.serves;`,
    `__cpuAfter(() => { const c = __cpu(); __cpuAppend(process.env.SUITE_CPU, JSON.stringify({ file: ${JSON.stringify(path)}, wall: Math.round(performance.now() - __cpuT0), ut: c[0] - __cpu0[0], st: c[1] - __cpu0[1], cut: c[2] - __cpu0[2], cst: c[3] - __cpu0[3], gateways: __starts.gateways - __gw0, serves: __starts.serves - __serve0 }) + '\\n') });`,
  ].join('')
}
