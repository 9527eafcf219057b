/**
 * @module
 * What a reload compares: the settings that only take effect at start (a changed one refuses the
 * reload: a restart is needed), and what changed between two configs, for the log and the audit
 * line. Generic over the config's top-level sections, so a section added later (`aliases:`) is
 * reported without a change here.
 */
import type { Config, ConfigProblem } from '../config/index.ts'

/**
 * Settings bound to what outlives a reload — the listening socket, the database and limiter
 * engines, the usage recorder, the logger and the tracer, the process count — by their path in
 * the file. Everything else (plans, limits, prices, providers and their key pools, models,
 * aliases, admin and metrics tokens, body and stream bounds, CORS and allowed hosts, retention,
 * alerts) applies to the next request.
 */
const AT_START: ReadonlyArray<readonly [path: string, value: (c: Config) => unknown]> = [
  ['/server/host', (c) => c.server.host],
  ['/server/port', (c) => c.server.port],
  ['/server/workers', (c) => c.server.workers],
  ['/server/idle_timeout_s', (c) => c.server.idleTimeoutS],
  ['/server/max_upstream_connections', (c) => c.server.maxUpstreamConnections],
  ['/database/path', (c) => c.database.path],
  ['/database/url', (c) => c.database.url],
  ['/database/busy_timeout_ms', (c) => c.database.busyTimeoutMs],
  ['/database/pool_size', (c) => c.database.poolSize],
  ['/limits/redis_url', (c) => c.limiter.redisUrl],
  ['/limits/on_unavailable', (c) => c.limiter.onUnavailable],
  ['/limits/reservation_ttl_s', (c) => c.limiter.reservationTtlMs],
  ['/limits/minute_window_ms', (c) => c.windows.minuteMs],
  ['/limits/day_window_ms', (c) => c.windows.dayMs],
  ['/usage/flush_ms', (c) => c.usage.flushMs],
  ['/logging/level', (c) => c.logging.level],
  ['/logging/access', (c) => c.logging.access],
  ['/telemetry', (c) => c.telemetry],
]

/** The paths of `AT_START`, for the documents and their test. */
export const RESTART_ONLY_PATHS: readonly string[] = AT_START.map(([path]) => path)

/**
 * One problem per start-only setting that differs. The values are never quoted: a database URL
 * holds a password.
 */
export function restartProblems(running: Config, next: Config): ConfigProblem[] {
  return AT_START.filter(([, value]) => !same(value(running), value(next))).map(([path]) => ({
    path,
    message:
      'changed, but this setting takes effect only when the gateway starts: restart `switchyard serve` to apply it (the running gateway keeps its current value; change it back to reload the rest)',
  }))
}

/** Names added, removed and changed in one section that is a map or a list of named entries. */
export interface NamedChanges {
  added: string[]
  removed: string[]
  changed: string[]
}

export interface ConfigChanges {
  /** Top-level sections whose resolved value differs (`plans`, `providers`, `server` ...). */
  sections: string[]
  /** For each changed section made of named entries (plans by name, providers by prefix, aliases by id). */
  entries: Record<string, NamedChanges>
}

export function configChanges(before: Config, after: Config): ConfigChanges {
  const sections: string[] = []
  const entries: Record<string, NamedChanges> = {}
  const keys = new Set([...Object.keys(before), ...Object.keys(after)])
  keys.delete('source')
  for (const key of keys) {
    const a = (before as unknown as Record<string, unknown>)[key]
    const b = (after as unknown as Record<string, unknown>)[key]
    if (same(a, b)) continue
    sections.push(key)
    const named = namedChanges(a, b)
    if (named) entries[key] = named
  }
  return { sections, entries }
}

/** A map (plans) or a list of objects with an `id`, `prefix` or `name` (aliases, providers) by that name. */
function namedChanges(a: unknown, b: unknown): NamedChanges | null {
  const x = byName(a)
  const y = byName(b)
  if (!x || !y) return null
  return {
    added: [...y.keys()].filter((n) => !x.has(n)),
    removed: [...x.keys()].filter((n) => !y.has(n)),
    changed: [...y.keys()].filter((n) => x.has(n) && !same(x.get(n), y.get(n))),
  }
}

function byName(v: unknown): Map<string, unknown> | null {
  if (v === undefined || v === null) return new Map()
  if (Array.isArray(v)) {
    const m = new Map<string, unknown>()
    for (const item of v) {
      const o = item as Record<string, unknown> | null
      const name = o && typeof o === 'object' ? (o.id ?? o.prefix ?? o.name) : undefined
      if (typeof name !== 'string') return null
      m.set(name, item)
    }
    return m
  }
  if (typeof v === 'object') return new Map(Object.entries(v as Record<string, unknown>))
  return null
}

/** Resolved config values are plain data (JSON-shaped): compared by their JSON text. */
function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}
