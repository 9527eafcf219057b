/**
 * @module
 * `beforeEach` and `afterEach` with the suite's timeout. Bun 1.4 holds these two hooks to its
 * 5 s default whatever the preload's `setDefaultTimeout` says (that reaches tests and the `All`
 * hooks only; bunfig's `timeout` is ignored), so a hook that launches Chromium or stops a gateway
 * on a loaded 2-core machine failed its test at 5 s (console-refusals.test.ts in CI, 2026-11-27).
 * Test files take the two hooks from here; test/arch/hooks.test.ts keeps it so.
 *
 * @example
 * import { afterEach } from '../support/hooks.ts'
 * afterEach(() => gw?.stop())
 */
import { afterEach as bunAfterEach, beforeEach as bunBeforeEach } from 'bun:test'

/** Every test's and hook's limit: end-to-end tests start real servers, subprocesses and a browser. */
export const SUITE_TIMEOUT_MS = 60_000

type Hook = Parameters<typeof bunBeforeEach>[0]

export const beforeEach = (fn: Hook): void => bunBeforeEach(fn, SUITE_TIMEOUT_MS)
export const afterEach = (fn: Hook): void => bunAfterEach(fn, SUITE_TIMEOUT_MS)
