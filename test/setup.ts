/**
 * @module
 * Preloaded by `bun test` (bunfig.toml). Bun ignores a `timeout` key in bunfig's `[test]`
 * section, so the 5 s default applied to every test; end-to-end tests start real servers and
 * subprocesses, which can take longer than that on a loaded 2-core CI machine. The default set
 * here reaches only the FIRST file of a run (Bun 1.4.4: a 6-s test in the second file of
 * `bun test dir/` times out at 5 s), so `npm test` also passes `--timeout 60000`, which reaches
 * every file and every hook; this call keeps a bare `bun test one-file.test.ts` at the same limit.
 */
import { setDefaultTimeout } from 'bun:test'
import { SUITE_TIMEOUT_MS } from './support/hooks.ts'

setDefaultTimeout(SUITE_TIMEOUT_MS)
