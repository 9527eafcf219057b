/**
 * @module
 * Preloaded by `bun test` (bunfig.toml). Bun ignores a `timeout` key in bunfig's `[test]`
 * section, so the 5 s default applied to every test; end-to-end tests start real servers and
 * subprocesses, which can take longer than that on a loaded 2-core CI machine.
 */
import { setDefaultTimeout } from 'bun:test'

setDefaultTimeout(60_000)
