/**
 * @module
 * What a reload compares, by one table of the file's settings (`SETTINGS`): each with its path as
 * the file spells it, how to read it from the resolved config, and whether it takes effect only
 * at start (a changed one refuses the reload: a restart is needed). Every report — the reload's
 * answer, `switchyard reload`'s line, the log, the audit line, the `reload.*` webhooks — names a
 * change by these paths (`server.cors_origins`, `limits.suspension`, `plans.free`), never by the
 * resolved object's own names (`corsOrigins`, `bodyTimeoutMs`). A setting added to the config is
 * added here: test/app/config-changes.test.ts changes every resolved value and expects a path,
 * and changes every setting in a file (its own table, start-only or live) and expects its own path.
 */
import type { Config, ConfigProblem } from '../config/index.ts'

interface Setting {
  /** The path in the file, dotted: `server.body_timeout_s`. */
  path: string
  value: (c: Config) => unknown
  /**
   * `start`: bound to what outlives a reload (the listening socket, the database and limiter
   * engines, the usage recorder, the logger and the tracer, the process count). `named`: a map or a
   * list of named entries (plans by name, providers by prefix, aliases by id), reported by name.
   */
  kind?: 'start' | 'named'
}

/**
 * Every setting of the file. Everything but the `start` ones (plans, limits, prices, providers and
 * their key pools, models, aliases, admin and metrics tokens, body and stream bounds, CORS and
 * allowed hosts, retention, alerts) applies to the next request.
 */
const SETTINGS: readonly Setting[] = [
  { path: 'server.host', value: (c) => c.server.host, kind: 'start' },
  { path: 'server.port', value: (c) => c.server.port, kind: 'start' },
  { path: 'server.workers', value: (c) => c.server.workers, kind: 'start' },
  { path: 'server.idle_timeout_s', value: (c) => c.server.idleTimeoutS, kind: 'start' },
  { path: 'server.max_upstream_connections', value: (c) => c.server.maxUpstreamConnections, kind: 'start' },
  { path: 'server.body_limit_bytes', value: (c) => c.server.bodyLimitBytes },
  { path: 'server.body_timeout_s', value: (c) => c.server.bodyTimeoutMs },
  { path: 'server.stream_keepalive_ms', value: (c) => c.server.streamKeepaliveMs },
  { path: 'server.stream_hold_ms', value: (c) => c.server.streamHoldMs },
  { path: 'server.drain_timeout_s', value: (c) => c.server.drainTimeoutS },
  { path: 'server.cors_origins', value: (c) => c.server.corsOrigins },
  { path: 'server.allowed_hosts', value: (c) => c.server.allowedHosts },
  { path: 'database.path', value: (c) => c.database.path, kind: 'start' },
  { path: 'database.url', value: (c) => c.database.url, kind: 'start' },
  { path: 'database.busy_timeout_ms', value: (c) => c.database.busyTimeoutMs, kind: 'start' },
  { path: 'database.pool_size', value: (c) => c.database.poolSize, kind: 'start' },
  { path: 'admin.token', value: (c) => c.admin.token },
  { path: 'admin.session_ttl_s', value: (c) => c.admin.sessionTtlMs },
  { path: 'metrics.token', value: (c) => c.metrics.token },
  { path: 'logging.level', value: (c) => c.logging.level, kind: 'start' },
  { path: 'logging.access', value: (c) => c.logging.access, kind: 'start' },
  { path: 'usage.retention_days', value: (c) => c.usage.retentionDays },
  { path: 'usage.flush_ms', value: (c) => c.usage.flushMs, kind: 'start' },
  { path: 'usage.log_max_rows', value: (c) => c.usage.logMaxRows },
  { path: 'usage.hourly_retention_days', value: (c) => c.usage.hourlyRetentionDays },
  { path: 'usage.daily_retention_days', value: (c) => c.usage.dailyRetentionDays },
  { path: 'limits.suspension', value: (c) => c.suspension },
  { path: 'limits.minute_window_ms', value: (c) => c.windows.minuteMs, kind: 'start' },
  { path: 'limits.day_window_ms', value: (c) => c.windows.dayMs, kind: 'start' },
  { path: 'limits.redis_url', value: (c) => c.limiter.redisUrl, kind: 'start' },
  { path: 'limits.on_unavailable', value: (c) => c.limiter.onUnavailable, kind: 'start' },
  { path: 'limits.reservation_ttl_s', value: (c) => c.limiter.reservationTtlMs, kind: 'start' },
  { path: 'alerts.webhooks', value: (c) => c.alerts.webhooks },
  { path: 'alerts.plan_expiring_days', value: (c) => c.alerts.planExpiringDays },
  { path: 'alerts.backoff_ms', value: (c) => c.alerts.backoffMs },
  { path: 'alerts.max_backoff_ms', value: (c) => c.alerts.maxBackoffMs },
  { path: 'alerts.give_up_after_s', value: (c) => c.alerts.giveUpAfterMs },
  { path: 'alerts.poll_ms', value: (c) => c.alerts.pollMs },
  { path: 'telemetry', value: (c) => c.telemetry, kind: 'start' },
  { path: 'providers', value: (c) => c.providers, kind: 'named' },
  { path: 'aliases', value: (c) => c.aliases, kind: 'named' },
  { path: 'plans', value: (c) => c.plans, kind: 'named' },
  { path: 'default_plan', value: (c) => c.defaultPlan },
]

/** A config problem's path (a JSON pointer, as `config check` prints): `/server/port`. */
const pointer = (path: string) => `/${path.replaceAll('.', '/')}`

/** The start-only settings, by the path their problem names, for the documents and their test. */
export const RESTART_ONLY_PATHS: readonly string[] = SETTINGS.filter((s) => s.kind === 'start').map((s) =>
  pointer(s.path),
)

/** Every live setting's path (dotted), for the test that walks them. */
export const LIVE_PATHS: readonly string[] = SETTINGS.filter((s) => s.kind !== 'start').map((s) => s.path)

/**
 * One problem per start-only setting that differs. The values are never quoted: a database URL
 * holds a password.
 */
export function restartProblems(running: Config, next: Config): ConfigProblem[] {
  return SETTINGS.filter((s) => s.kind === 'start' && !same(s.value(running), s.value(next))).map((s) => ({
    path: pointer(s.path),
    message:
      'changed, but this setting takes effect only when the gateway starts: restart `switchyard serve` to apply it (the running gateway keeps its current value; change it back to reload the rest)',
  }))
}

/** Names added, removed and changed in one section. */
export interface NamedChanges {
  added: string[]
  removed: string[]
  changed: string[]
}

export interface ConfigChanges {
  /** The file's top-level sections with a change (`server`, `limits`, `plans`, `default_plan` ...). */
  sections: string[]
  /**
   * For each changed section with keys under it, those that changed, by the file's names: a
   * section's settings (`server`: `cors_origins`; `limits`: `suspension`) are `changed`; the
   * named entries of plans, providers and aliases are `added`, `removed` or `changed`.
   */
  entries: Record<string, NamedChanges>
}

/** What differs between two configs of which no start-only setting differs (`restartProblems`). */
export function configChanges(before: Config, after: Config): ConfigChanges {
  const sections: string[] = []
  const entries: Record<string, NamedChanges> = {}
  for (const s of SETTINGS) {
    if (s.kind === 'start') continue
    const a = s.value(before)
    const b = s.value(after)
    if (same(a, b)) continue
    const [section, key] = s.path.split('.') as [string, string | undefined]
    if (!sections.includes(section)) sections.push(section)
    if (s.kind === 'named') entries[section] = namedChanges(a, b)
    else if (key !== undefined) {
      entries[section] ??= { added: [], removed: [], changed: [] }
      entries[section].changed.push(key)
    }
  }
  return { sections, entries }
}

/** The changes as dotted paths, for a line a person reads: `server.cors_origins`, `plans.extra (added)`. */
export function changedPaths(c: ConfigChanges): string[] {
  return c.sections.flatMap((section) => {
    const e = c.entries[section]
    if (!e) return [section]
    return [
      ...e.changed.map((n) => `${section}.${n}`),
      ...e.added.map((n) => `${section}.${n} (added)`),
      ...e.removed.map((n) => `${section}.${n} (removed)`),
    ]
  })
}

/** A map (plans) or a list of objects with an `id` (aliases) or `prefix` (providers), by that name. */
function namedChanges(a: unknown, b: unknown): NamedChanges {
  const x = byName(a)
  const y = byName(b)
  return {
    added: [...y.keys()].filter((n) => !x.has(n)),
    removed: [...x.keys()].filter((n) => !y.has(n)),
    changed: [...y.keys()].filter((n) => x.has(n) && !same(x.get(n), y.get(n))),
  }
}

function byName(v: unknown): Map<string, unknown> {
  if (Array.isArray(v)) {
    const m = new Map<string, unknown>()
    for (const item of v) {
      const o = item as Record<string, unknown>
      m.set(String(o.id ?? o.prefix), item)
    }
    return m
  }
  return new Map(Object.entries((v ?? {}) as Record<string, unknown>))
}

/** Resolved config values are plain data (JSON-shaped): compared by their JSON text. */
function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}
