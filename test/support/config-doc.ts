/** Config documents and temporary directories for tests (no server imports). */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Directories tempDir made that removeTempDirs has not removed yet. */
const made = new Set<string>()

/**
 * A fresh directory under the temp dir, removed after the test file that made it (removeTempDirs,
 * run by test/setup.ts after the file's own `afterAll`) if the file did not remove it: a run left
 * ~330 behind before (4.7 GB in /tmp over a day of runs). Redis's directories are their
 * watchdogs' (shared-engines.ts), removed after the server stops; PostgreSQL's are not made here
 * (engines.ts: on a tmpfs where there is one).
 */
export function tempDir(prefix = 'switchyard-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  if (prefix !== 'switchyard-redis-') made.add(dir)
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
  return structuredClone(
    fitSharedPlans({
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [DEMO_PROVIDER],
      plans: PLANS,
      default_plan: 'free',
      ...overrides,
    }),
  )
}

/**
 * `doc` with the shared PLANS' `tier:` entries that no model of its providers has left out: a test
 * that brings its own models keeps PLANS as they mean there (the free plan: no free model, so none),
 * where `config check` refuses a tier no model has. A test's own plans are kept as it wrote them.
 * Applied where a test's document becomes a config: here, `startGateway` and `writeConfig`.
 */
export function fitSharedPlans(doc: Record<string, unknown>): Record<string, unknown> {
  const { plans, providers } = doc
  if (!plans || typeof plans !== 'object' || !Array.isArray(providers)) return doc
  const tiers = new Set(
    providers.flatMap((p) =>
      Array.isArray(p?.models) ? p.models.map((m: { tier?: unknown }) => m?.tier) : [],
    ),
  )
  const shared = PLANS as Record<string, { models: string[] }>
  const fitted = Object.entries(plans).map(([name, plan]) => {
    if (plan !== shared[name]) return [name, plan]
    const models = plan.models.filter((m: string) => !m.startsWith('tier:') || tiers.has(m.slice(5)))
    return [name, { ...plan, models }]
  })
  return { ...doc, plans: Object.fromEntries(fitted) }
}
