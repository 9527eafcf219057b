/** Config documents and temporary directories for tests (no server imports). */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Directories tempDir made that removeTempDirs has not removed yet. */
const made = new Set<string>()

/**
 * A fresh directory under the temp dir, removed after the test file that made it (removeTempDirs,
 * run by test/setup.ts after the file's own `afterAll`) if the file did not remove it: a run left
 * ~330 behind before (4.7 GB in /tmp over a day of runs). The engines' directories are their
 * watchdogs' (shared-engines.ts), removed after the server stops: removed first, pg_ctl could not
 * find the server to stop it.
 */
export function tempDir(prefix = 'switchyard-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  if (prefix !== 'switchyard-pg-' && prefix !== 'switchyard-redis-') made.add(dir)
  return dir
}

/** Removes what tempDir made and nothing removed (test/setup.ts: after each test file). */
export function removeTempDirs(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
  made.clear()
}

/** The admin token of every test config: at least 32 characters, as `config check` requires. */
export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123'

export const DEMO_PROVIDER = {
  prefix: 'demo',
  kind: 'demo',
  models: [
    {
      name: 'echo',
      context_window: 8192,
      max_output_tokens: 1024,
      features: ['streaming', 'tools', 'json_mode', 'system_messages'],
      tier: 'free',
    },
    {
      name: 'echo-pro',
      context_window: 32768,
      max_output_tokens: 4096,
      features: ['streaming', 'tools', 'json_mode', 'json_schema', 'n', 'system_messages'],
      tier: 'pro',
    },
  ],
}

export const PLANS = {
  free: { rpm: 5, rpd: 100, models: ['tier:free'] },
  basic: { rpm: 10, rpd: null, models: ['tier:free'], days: 30, on_expiry: { downgrade: 'free' } },
  pro: { rpm: 10, rpd: null, models: ['*'], days: 30, on_expiry: { downgrade: 'free' } },
  unlimited: { rpm: null, rpd: null, models: ['*'] },
}

/**
 * A plan whose token and money limits are far above anything a test spends: its requests are
 * metered (reserved, gated, settled) and never refused for it. A fresh object each call.
 */
export function meteredPlan(): Record<string, unknown> {
  return { rpm: null, rpd: null, tpm: 1_000_000, budget: { usd: 100, period: 'month' }, models: ['*'] }
}

export function testConfigDoc(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return structuredClone({
    server: { host: '127.0.0.1', port: 0 },
    admin: { token: ADMIN_TOKEN },
    providers: [DEMO_PROVIDER],
    plans: PLANS,
    default_plan: 'free',
    ...overrides,
  })
}
