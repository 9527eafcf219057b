/**
 * @module
 * Preloaded by `bun test` (bunfig.toml). Bun ignores a `timeout` key in bunfig's `[test]`
 * section, so the 5 s default applied to every test; end-to-end tests start real servers and
 * subprocesses, which can take longer than that on a loaded 2-core CI machine. The default set
 * here does not reach `beforeEach` / `afterEach`: test files take those from support/hooks.ts.
 */
import { setDefaultTimeout } from 'bun:test'
import { SUITE_TIMEOUT_MS } from './support/hooks.ts'

setDefaultTimeout(SUITE_TIMEOUT_MS)
