/**
 * @module
 * Loads `switchyard.yaml`: YAML → `${ENV}` interpolation → TypeBox validation → cross-reference
 * checks → a resolved `Config` with every default filled in. Every problem carries its path.
 */
import { dirname, isAbsolute, resolve as resolvePath } from 'node:path'
import { microUnits } from '../util/micro-units.ts'
import { checkResilience } from './check-resilience.ts'
import { type InterpolationProblem, interpolate } from './interpolate.ts'
import { KIND_LIMITS } from './kind-limits.ts'
import { checkModelTypes, resolveModel } from './models.ts'
import { ConfigSchema, type PlanConfig, type ProviderConfig, type RawConfig } from './schema.ts'
import { schemaProblems } from './schema-problems.ts'

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
  }
  /** `url` (PostgreSQL) wins over `path` (SQLite) when set. */
  database: { path: string; url: string | null; busyTimeoutMs: number; poolSize: number }
  admin: { token: string | null; sessionTtlMs: number }
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
  providers: ProviderConfig[]
  /** By name, without a prototype: a name a client sends (`constructor`) finds no plan it did not define. */
  plans: Record<string, PlanConfig>
  defaultPlan: string
}

export interface ConfigProblem {
  path: string
  message: string
}

export class ConfigError extends Error {
  readonly problems: ConfigProblem[]
  constructor(source: string, problems: ConfigProblem[]) {
    super(
      `invalid config ${source}:\n${problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}\n` +
        'Fix the listed paths and run `switchyard config check` again.',
    )
    this.name = 'ConfigError'
    this.problems = problems
  }
}

export interface LoadOptions {
  /**
   * false: provider secrets (`${VAR}` under `providers`) may be unset — for commands that never
   * call a provider (accounts, keys, usage, models). `serve` and `config check` need them.
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
  const text = await file.text()
  let doc: unknown
  try {
    doc = Bun.YAML.parse(quotePlaceholders(text))
  } catch (err) {
    throw new ConfigError(path, [{ path: '/', message: `YAML syntax error: ${(err as Error).message}` }])
  }
  const config = parseConfig(doc, path, env, opts)
  const db = config.database.path
  if (db !== ':memory:' && !isAbsolute(db)) config.database.path = resolvePath(dirname(path), db)
  return config
}

/**
 * `{ token: ${X} }` is not valid YAML (a plain scalar in a flow mapping cannot hold `{}`), yet it
 * is the natural way to write it. A placeholder standing alone as a value is quoted before
 * parsing; interpolation then happens on the parsed strings, so no value can inject YAML.
 */
export function quotePlaceholders(text: string): string {
  return text.replace(/([:\-[,{]\s*)(\$\{[^}\n"']*\})(?=[ \t]*(?:[,}\]#\r\n]|$))/gm, '$1"$2"')
}

/** Validates an already-parsed document (used by tests and by `loadConfigFile`). */
export function parseConfig(
  doc: unknown,
  source = '',
  env: Record<string, string | undefined> = process.env,
  opts: LoadOptions = {},
): Config {
  const secrets = opts.secrets ?? true
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(source, [{ path: '/', message: 'expected a YAML mapping at the top level' }])
  }
  const envProblems: InterpolationProblem[] = []
  const value = interpolate(doc, env, envProblems)
  const problems: ConfigProblem[] = secrets
    ? [...envProblems]
    : envProblems.filter((p) => !p.path.startsWith('/providers/'))
  problems.push(...schemaProblems(ConfigSchema, value))
  if (problems.length) throw new ConfigError(source, dedupe(problems))
  const raw = value as RawConfig
  crossCheck(raw, problems, secrets)
  if (problems.length) throw new ConfigError(source, problems)
  return resolve(raw, source)
}

/** An interpolation problem and a schema problem at one path: keep the first. */
function dedupe(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>()
  return problems.filter((p) => {
    if (seen.has(p.path)) return false
    seen.add(p.path)
    return true
  })
}

/** Shorter admin tokens are refused: the admin API mints keys, and 32 characters cannot be guessed. */
export const MIN_ADMIN_TOKEN_LENGTH = 32

/** `secrets`: check what only `serve` (and `config check`) need — provider keys, the admin token. */
function crossCheck(raw: RawConfig, problems: ConfigProblem[], secrets: boolean): void {
  const token = raw.admin?.token
  if (secrets && token && token.length < MIN_ADMIN_TOKEN_LENGTH) {
    problems.push({
      path: '/admin/token',
      message: `admin.token is ${token.length} characters; it must be at least ${MIN_ADMIN_TOKEN_LENGTH} (generate one with \`openssl rand -hex 32\`), or empty to turn the admin API off`,
    })
  }
  // It travels as `Authorization: Bearer <token>`, one word of a header: with a space (or a
  // character a header cannot carry) no request or console sign-in could ever present it.
  if (secrets && token && !/^[\x21-\x7e]+$/.test(token)) {
    problems.push({
      path: '/admin/token',
      message:
        'admin.token must be printable ASCII without spaces (it is sent as "Authorization: Bearer <token>"); generate one with `openssl rand -hex 32`',
    })
  }
  const prefixes = new Map<string, number>()
  raw.providers.forEach((p, i) => {
    if (prefixes.has(p.prefix)) {
      problems.push({ path: `/providers/${i}/prefix`, message: `duplicate prefix '${p.prefix}'` })
    }
    prefixes.set(p.prefix, i)
    const names = new Set<string>()
    p.models.forEach((m, j) => {
      if (names.has(m.name)) {
        problems.push({ path: `/providers/${i}/models/${j}/name`, message: `duplicate model '${m.name}'` })
      }
      names.add(m.name)
      for (const [field, usd] of Object.entries(m.pricing ?? {})) {
        if (microUnits(usd) === null) {
          problems.push({
            path: `/providers/${i}/models/${j}/pricing/${field}`,
            message: `${usd} has more than 6 decimals; prices are USD per 1M tokens, kept to the micro-dollar`,
          })
        }
      }
      if (m.temperature && m.temperature.min > m.temperature.max) {
        problems.push({ path: `/providers/${i}/models/${j}/temperature`, message: 'min is greater than max' })
      }
      m.features?.forEach((feature, k) => {
        const why = KIND_LIMITS[p.kind][feature]
        if (why) {
          problems.push({
            path: `/providers/${i}/models/${j}/features/${k}`,
            message: `a ${p.kind} model cannot have '${feature}': ${why}; remove it from the list`,
          })
        }
      })
    })
    checkModelTypes(p, i, problems)
    if (p.max_tokens_param !== undefined && p.kind !== 'openai') {
      problems.push({
        path: `/providers/${i}/max_tokens_param`,
        message: `is for kind openai only (a ${p.kind} provider's own wire names the limit)`,
      })
    }
    if (p.wire === 'responses' && p.kind !== 'openai') {
      problems.push({
        path: `/providers/${i}/wire`,
        message: `'responses' is for kind openai only (a ${p.kind} provider speaks its own wire)`,
      })
    }
    if (
      secrets &&
      (p.kind === 'openai' || p.kind === 'anthropic' || p.kind === 'gemini') &&
      p.api_key === ''
    ) {
      problems.push({
        path: `/providers/${i}/api_key`,
        message: 'empty API key (set the environment variable it names)',
      })
    }
  })
  checkResilience(raw, problems, secrets)
  if (raw.database?.url && raw.database.path) {
    problems.push({ path: '/database', message: 'set either path (SQLite) or url (PostgreSQL), not both' })
  }
  if (raw.limits?.redis_url && !raw.database?.url) {
    problems.push({
      path: '/limits/redis_url',
      message: 'Redis admissions need a shared database for usage: set database.url (PostgreSQL)',
    })
  }
  if (!Object.hasOwn(raw.plans, raw.default_plan)) {
    problems.push({ path: '/default_plan', message: `plan '${raw.default_plan}' is not defined under plans` })
  }
  for (const [name, plan] of Object.entries(raw.plans)) {
    const exp = plan.on_expiry
    if (exp && exp !== 'disable') {
      if (!Object.hasOwn(raw.plans, exp.downgrade)) {
        problems.push({
          path: `/plans/${name}/on_expiry/downgrade`,
          message: `plan '${exp.downgrade}' is not defined`,
        })
      } else if (exp.downgrade === name) {
        problems.push({
          path: `/plans/${name}/on_expiry/downgrade`,
          message: 'a plan cannot downgrade to itself',
        })
      }
    }
    if (plan.budget && microUnits(plan.budget.usd) === null) {
      problems.push({
        path: `/plans/${name}/budget/usd`,
        message: `${plan.budget.usd} has more than 6 decimals (or is too large); budgets are kept to the micro-dollar`,
      })
    }
    plan.models.forEach((pattern, i) => {
      if (pattern === '*' || pattern.startsWith('tier:')) return
      const slash = pattern.indexOf('/')
      const prefix = slash > 0 ? pattern.slice(0, slash) : ''
      if (!prefix || slash === pattern.length - 1) {
        problems.push({
          path: `/plans/${name}/models/${i}`,
          message: `'${pattern}' is not 'prefix/name', 'prefix/*', 'tier:NAME' or '*'`,
        })
      } else if (!prefixes.has(prefix)) {
        problems.push({ path: `/plans/${name}/models/${i}`, message: `no provider has prefix '${prefix}'` })
      }
    })
  }
}

function resolve(raw: RawConfig, source: string): Config {
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
    },
    database: {
      path: raw.database?.path ?? './data/switchyard.db',
      url: raw.database?.url ?? null,
      busyTimeoutMs: raw.database?.busy_timeout_ms ?? 5_000,
      poolSize: raw.database?.pool_size ?? 10,
    },
    admin: { token: token ? token : null, sessionTtlMs: (raw.admin?.session_ttl_s ?? 43_200) * 1000 },
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
    providers: raw.providers.map((p) => ({ ...p, models: p.models.map(resolveModel) })),
    plans: Object.assign(Object.create(null), raw.plans),
    defaultPlan: raw.default_plan,
  }
}
