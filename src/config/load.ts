/**
 * @module
 * Loads `switchyard.yaml`: YAML → `${ENV}` interpolation → TypeBox validation → cross-reference
 * checks → a resolved `Config` with every default filled in. Every problem carries its path.
 */
import { dirname, isAbsolute, resolve as resolvePath } from 'node:path'
import { crossCheck } from './cross-check.ts'
import { ConfigError, type ConfigProblem } from './error.ts'
import { intactExcept } from './intact.ts'
import { interpolate } from './interpolate.ts'
import { resolveModel } from './models.ts'
import { ConfigSchema, type PlanConfig, type ProviderConfig, type RawConfig } from './schema.ts'
import type { AliasConfig } from './schema-aliases.ts'
import { schemaProblems } from './schema-problems.ts'
import { type AlertsConfig, resolveAlerts, resolveTelemetry, type TelemetryConfig } from './signals.ts'
import { readYaml } from './yaml.ts'

export interface SuspensionPolicy {
  enabled: boolean
  maxRejections: number
  windowMs: number
  durationMs: number
  /** Requests refused for their content count toward `maxRejections` too. */
  countInvalid: boolean
}

export interface Config {
  /** Absolute or cwd-relative path the config was read from ('' when built in code). */
  source: string
  server: {
    host: string
    port: number
    bodyLimitBytes: number
    bodyTimeoutMs: number
    idleTimeoutS: number
    streamKeepaliveMs: number
    streamHoldMs: number
    workers: number
    maxUpstreamConnections: number
    drainTimeoutS: number
    corsOrigins: string[]
    /** `server.allowed_hosts` as written, lower-cased; null when unset (server/host.ts decides). */
    allowedHosts: string[] | null
  }
  /** `url` (PostgreSQL) wins over `path` (SQLite) when set. */
  database: { path: string; url: string | null; busyTimeoutMs: number; poolSize: number }
  admin: { token: string | null; sessionTtlMs: number }
  /** `token`: the bearer token `/metrics` asks for; null = open (the default). */
  metrics: { token: string | null }
  logging: { level: 'debug' | 'info' | 'warn' | 'error'; access: boolean }
  usage: {
    retentionDays: number
    flushMs: number
    logMaxRows: number
    hourlyRetentionDays: number
    dailyRetentionDays: number
  }
  suspension: SuspensionPolicy
  windows: { minuteMs: number; dayMs: number }
  limiter: { redisUrl: string | null; onUnavailable: 'reject' | 'allow'; reservationTtlMs: number }
  alerts: AlertsConfig
  telemetry: TelemetryConfig
  providers: ProviderConfig[]
  /** Names for models (DESIGN §13), as written; checked against the providers' models. */
  aliases: AliasConfig[]
  /** By name, without a prototype: a name a client sends (`constructor`) finds no plan it did not define. */
  plans: Record<string, PlanConfig>
  defaultPlan: string
}

export interface LoadOptions {
  /**
   * false: provider secrets (`${VAR}` under `providers`) and the admin token may be unset — for
   * commands that never serve (accounts, keys, usage, models, migrate). `serve` and `config check` need them.
   */
  secrets?: boolean
}

/**
 * Reads, interpolates and validates a config file. Throws `ConfigError` listing every problem.
 * A relative `database.path` is resolved against the config file's folder, so every command
 * run from anywhere with `--config` opens the same database.
 */
export async function loadConfigFile(
  path: string,
  env: Record<string, string | undefined> = process.env,
  opts: LoadOptions = {},
): Promise<Config> {
  const file = Bun.file(path)
  if (!(await file.exists())) {
    throw new ConfigError(path, [
      {
        path: '/',
        message:
          'file not found (run `switchyard init` to write a starter config, or pass --config FILE or set SWITCHYARD_CONFIG)',
      },
    ])
  }
  const { doc, problems } = readYaml(await file.text())
  if (doc === undefined) throw new ConfigError(path, problems)
  const config = parseConfig(doc, path, env, opts, problems)
  const db = config.database.path
  if (db !== ':memory:' && !isAbsolute(db)) config.database.path = resolvePath(dirname(path), db)
  return config
}

/**
 * Validates an already-parsed document (used by tests and by `loadConfigFile`). `found`: problems
 * already seen in the file's text (keys written twice), listed first.
 */
export function parseConfig(
  doc: unknown,
  source = '',
  env: Record<string, string | undefined> = process.env,
  opts: LoadOptions = {},
  found: ConfigProblem[] = [],
): Config {
  const secrets = opts.secrets ?? true
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(source, [{ path: '/', message: 'expected a YAML mapping at the top level' }])
  }
  const { value, problems: envProblems, sources } = interpolate(doc, env, ConfigSchema)
  const schema = schemaProblems(ConfigSchema, value, '', (path) => sources.has(path))
  // An excused variable is excused only where its empty value is a valid setting: elsewhere the
  // problem to name is the variable, not the schema's words about an empty value.
  const invalid = new Set(schema.map((p) => p.path))
  const placeholders: ConfigProblem[] = envProblems
    .filter((p) => secrets || !(p.unset && servesOnly(p.path)) || invalid.has(p.path))
    .map(({ path, message }) => ({ path, message }))
  const checked = [...schema]
  // The cross checks run on whatever the schema passed, so one run lists every problem.
  const raw = value as RawConfig
  crossCheck(raw, checked, secrets, intactExcept([...placeholders, ...schema].map((p) => p.path)))
  // A value from the environment that is not what it must be names its variable (README).
  for (const p of checked) {
    const names = sources.get(p.path)
    if (names) p.message += ` (from environment variable${names.length > 1 ? 's' : ''} ${names.join(', ')})`
  }
  // An unset variable's empty value fails its type too: the variable is the one problem to name.
  const named = new Set(placeholders.map((p) => p.path))
  const problems = [...found, ...placeholders, ...checked.filter((p) => !named.has(p.path))]
  // The OTEL_* variables are read only once the file is valid (they overlay its `telemetry`).
  const telemetry = problems.length ? null : resolveTelemetry(raw, env, problems)
  if (problems.length || !telemetry) throw new ConfigError(source, problems)
  return { ...resolve(raw, source), telemetry }
}

/**
 * What only `serve` (and `config check`) use, so may be unset for the other commands: provider
 * settings (their keys above all), the admin token (absent, the admin API is off) and the metrics
 * token (absent, `/metrics` is open).
 */
const servesOnly = (path: string) =>
  path.startsWith('/providers/') || path === '/admin/token' || path === '/metrics/token'

function resolve(raw: RawConfig, source: string): Omit<Config, 'telemetry'> {
  const s = raw.server ?? {}
  const susp = raw.limits?.suspension ?? {}
  const token = raw.admin?.token
  return {
    source,
    server: {
      host: s.host ?? '127.0.0.1',
      port: s.port ?? 8080,
      bodyLimitBytes: s.body_limit_bytes ?? 10 * 1024 * 1024,
      bodyTimeoutMs: (s.body_timeout_s ?? 15) * 1000,
      idleTimeoutS: s.idle_timeout_s ?? 120,
      streamKeepaliveMs: s.stream_keepalive_ms ?? 10_000,
      streamHoldMs: s.stream_hold_ms ?? 5_000,
      workers: s.workers ?? 1,
      maxUpstreamConnections: s.max_upstream_connections ?? 4096,
      drainTimeoutS: s.drain_timeout_s ?? 30,
      corsOrigins: s.cors_origins ?? [],
      allowedHosts: s.allowed_hosts?.map((h) => h.toLowerCase()) ?? null,
    },
    database: {
      path: raw.database?.path ?? './data/switchyard.db',
      url: raw.database?.url ?? null,
      busyTimeoutMs: raw.database?.busy_timeout_ms ?? 5_000,
      poolSize: raw.database?.pool_size ?? 10,
    },
    admin: { token: token ? token : null, sessionTtlMs: (raw.admin?.session_ttl_s ?? 43_200) * 1000 },
    metrics: { token: raw.metrics?.token ? raw.metrics.token : null },
    logging: { level: raw.logging?.level ?? 'info', access: raw.logging?.access ?? true },
    usage: {
      retentionDays: raw.usage?.retention_days ?? 90,
      flushMs: raw.usage?.flush_ms ?? 200,
      logMaxRows: raw.usage?.log_max_rows ?? 10_000_000,
      hourlyRetentionDays: raw.usage?.hourly_retention_days ?? 400,
      dailyRetentionDays: raw.usage?.daily_retention_days ?? 3650,
    },
    suspension: {
      enabled: susp.enabled ?? true,
      maxRejections: susp.max_rejections ?? 50,
      windowMs: (susp.window_s ?? 600) * 1000,
      durationMs: (susp.duration_s ?? 900) * 1000,
      countInvalid: susp.count_invalid ?? true,
    },
    windows: {
      minuteMs: raw.limits?.minute_window_ms ?? 60_000,
      dayMs: raw.limits?.day_window_ms ?? 86_400_000,
    },
    limiter: {
      redisUrl: raw.limits?.redis_url ?? null,
      onUnavailable: raw.limits?.on_unavailable ?? 'reject',
      reservationTtlMs: (raw.limits?.reservation_ttl_s ?? 3600) * 1000,
    },
    providers: raw.providers.map((p) => ({ ...p, models: p.models.map((m) => resolveModel(m, p.kind)) })),
    aliases: raw.aliases ?? [],
    plans: Object.assign(Object.create(null), raw.plans),
    defaultPlan: raw.default_plan,
    alerts: resolveAlerts(raw),
  }
}
