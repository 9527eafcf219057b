/**
 * @module
 * TypeBox schema of `switchyard.yaml`, and the types read from it. Every object is closed
 * (`additionalProperties: false`) so a typo is an error instead of a silently ignored setting. The
 * providers and their models are in `schema-providers.ts`, the building blocks in `schema-units.ts`,
 * alerts and telemetry in `schema-signals.ts`.
 */
import { type Static, Type as T, type TOptional } from '@sinclair/typebox'
import { LIMIT_SETTINGS } from './limit-settings.ts'
import { AliasSchema } from './schema-aliases.ts'
import {
  BudgetSchema,
  type Feature,
  type KeySchema,
  type ModelSchema,
  type PricingSchema,
  ProviderSchema,
  type TimeoutsSchema,
} from './schema-providers.ts'
import { AlertsSchema, TelemetrySchema } from './schema-signals.ts'
import {
  Closed,
  Days,
  Ms,
  NamedMap,
  NullableCount,
  PositiveInt,
  Secret,
  spanSeconds,
} from './schema-units.ts'

/**
 * A plan's limits, one field per entry of the list of limit settings (limit-settings.ts): a count
 * is a whole number or null; `budget` is not nullable (a union would report a typo inside it
 * without its path), absent = none; `models` lists model ids (`prefix/name`, `prefix/*`),
 * `tier:NAME`, or `*`.
 */
const LIMIT_SCHEMAS = {
  count: NullableCount,
  budget: BudgetSchema,
  models: T.Array(T.String({ minLength: 1 })),
}
type LimitSchemas = typeof LIMIT_SCHEMAS
type Settings = (typeof LIMIT_SETTINGS)[number]
type PlanLimitSchemas = {
  [S in Settings as S['name']]: S['plan'] extends 'required'
    ? LimitSchemas[S['kind']]
    : TOptional<LimitSchemas[S['kind']]>
}
const planLimitSchemas = (): PlanLimitSchemas =>
  Object.fromEntries(
    LIMIT_SETTINGS.map((s) => {
      const schema = LIMIT_SCHEMAS[s.kind]
      return [s.name, s.plan === 'required' ? schema : T.Optional(schema)]
    }),
  ) as PlanLimitSchemas

export const PlanSchema = T.Object(
  {
    ...planLimitSchemas(),
    /** How long the plan lasts once assigned; null or absent = no end. `--days` overrides. */
    days: T.Optional(T.Union([Days, T.Null()])),
    on_expiry: T.Optional(
      T.Union([T.Literal('disable'), T.Object({ downgrade: T.String({ minLength: 1 }) }, Closed)]),
    ),
    description: T.Optional(T.String()),
  },
  Closed,
)

export const SuspensionSchema = T.Object(
  {
    enabled: T.Optional(T.Boolean()),
    /** More than this many rate-limited requests ... */
    max_rejections: T.Optional(PositiveInt),
    /** ... within this many seconds ... */
    window_s: T.Optional(spanSeconds(1)),
    /** ... suspends the key for this many seconds. */
    duration_s: T.Optional(spanSeconds(1)),
    /** Requests refused for what they contain (4xx before admission) count like rate-limited ones. */
    count_invalid: T.Optional(T.Boolean()),
  },
  Closed,
)

export const ConfigSchema = T.Object(
  {
    server: T.Optional(
      T.Object(
        {
          host: T.Optional(T.String({ minLength: 1 })),
          port: T.Optional(T.Integer({ minimum: 0, maximum: 65535 })),
          /** Largest accepted request body; larger → 413. */
          body_limit_bytes: T.Optional(PositiveInt),
          /** Longest a request body may take to arrive, from the headers; slower → 408. */
          body_timeout_s: T.Optional(T.Integer({ minimum: 1, maximum: 3600 })),
          /** Bun's socket idle timeout (max 255). Streams send keep-alives well inside it. */
          idle_timeout_s: T.Optional(T.Integer({ minimum: 1, maximum: 255 })),
          /** Interval of `: keep-alive` comments while a stream waits for the upstream. */
          stream_keepalive_ms: T.Optional(Ms),
          /** How long the HTTP status is held waiting for the upstream's first stream event. */
          stream_hold_ms: T.Optional(Ms),
          workers: T.Optional(T.Integer({ minimum: 1, maximum: 64 })),
          /** Simultaneous upstream connections per process (Bun's fetch allows 256 by default). */
          max_upstream_connections: T.Optional(T.Integer({ minimum: 16, maximum: 65_000 })),
          /** On SIGTERM/SIGINT, how long requests and streams in flight may still run. */
          drain_timeout_s: T.Optional(T.Integer({ minimum: 0, maximum: 3600 })),
          /** Browser origins allowed by CORS (`*` = any); default none. */
          cors_origins: T.Optional(
            T.Array(
              T.String({
                pattern: '^(\\*|https?://[^/\\s]+)$',
                patternWhy: "'*' or an origin, http(s)://host[:port] without a path",
              }),
            ),
          ),
          /**
           * Host names (no scheme, no port) the gateway answers to, besides IP literals and names no
           * public DNS holds; `*.domain` for every name under it, `*` for any (server/host.ts).
           */
          allowed_hosts: T.Optional(
            T.Array(T.String({ pattern: '^(\\*|(\\*\\.)?[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*)$' })),
          ),
        },
        Closed,
      ),
    ),
    database: T.Optional(
      T.Object(
        {
          /** The embedded SQLite file (the default engine). */
          path: T.Optional(T.String({ minLength: 1 })),
          /** PostgreSQL instead of SQLite: postgres://user:pass@host:5432/db. */
          url: T.Optional(
            Secret({ pattern: '^postgres(ql)?://', patternWhy: 'a postgres:// or postgresql:// URL' }),
          ),
          busy_timeout_ms: T.Optional(Ms),
          /** PostgreSQL connections per process. */
          pool_size: T.Optional(T.Integer({ minimum: 1, maximum: 1000 })),
        },
        Closed,
      ),
    ),
    admin: T.Optional(
      T.Object(
        {
          token: T.Optional(Secret()),
          /** How long a console sign-in lasts. */
          session_ttl_s: T.Optional(T.Integer({ minimum: 60, maximum: 30 * 86_400 })),
        },
        Closed,
      ),
    ),
    metrics: T.Optional(
      T.Object(
        {
          /**
           * `GET /metrics` then needs `Authorization: Bearer <token>` (Prometheus: `authorization:
           * { credentials: ... }`); unset or empty, it is open as before.
           */
          token: T.Optional(Secret()),
        },
        Closed,
      ),
    ),
    logging: T.Optional(
      T.Object(
        {
          level: T.Optional(
            T.Union([T.Literal('debug'), T.Literal('info'), T.Literal('warn'), T.Literal('error')]),
          ),
          /** One JSON line per API request at `info`. */
          access: T.Optional(T.Boolean()),
        },
        Closed,
      ),
    ),
    usage: T.Optional(
      T.Object(
        {
          /** Usage rows older than this are pruned. */
          retention_days: T.Optional(Days),
          /** Completed-request details are written in batches at this interval. */
          flush_ms: T.Optional(Ms),
          /** The request log keeps at most this many rows (the oldest go first; never the last day). */
          log_max_rows: T.Optional(T.Integer({ minimum: 1000 })),
          /** Hourly usage rollups older than this are pruned; daily rollups after `daily_retention_days`. */
          hourly_retention_days: T.Optional(Days),
          daily_retention_days: T.Optional(Days),
        },
        Closed,
      ),
    ),
    limits: T.Optional(
      T.Object(
        {
          suspension: T.Optional(SuspensionSchema),
          /** Length of the "minute" and "day" windows. Leave at 60000 / 86400000 outside tests. */
          minute_window_ms: T.Optional(Ms),
          day_window_ms: T.Optional(Ms),
          /** Admissions in Redis instead of the database: redis://host:6379/0. */
          redis_url: T.Optional(
            Secret({ pattern: '^rediss?://', patternWhy: 'a redis:// or rediss:// URL' }),
          ),
          /** What to do while the limiter's engine is unreachable: 503 (reject) or serve unlimited (allow). */
          on_unavailable: T.Optional(T.Union([T.Literal('reject'), T.Literal('allow')])),
          /**
           * A token or money reservation nobody settled (its process was killed mid-request) is
           * settled to itself (the most it could have cost) this long after its admission. Must
           * exceed the longest a request runs (every attempt and fallback included). Default 3600.
           */
          reservation_ttl_s: T.Optional(spanSeconds(1)),
        },
        Closed,
      ),
    ),
    /** Signed webhooks (DESIGN §15). */
    alerts: T.Optional(AlertsSchema),
    /** OpenTelemetry traces over OTLP/HTTP (DESIGN §15). */
    telemetry: T.Optional(TelemetrySchema),
    providers: T.Array(ProviderSchema, { minItems: 1 }),
    /** Names for models: exact ids, patterns, virtual models (schema-aliases.ts, DESIGN §13). */
    aliases: T.Optional(T.Array(AliasSchema)),
    plans: NamedMap('plan name', '^[A-Za-z0-9._-]+$', "letters, digits, '.', '_' and '-' only", PlanSchema),
    default_plan: T.String({ minLength: 1 }),
  },
  Closed,
)

/** A model entry once loaded: an embedding model's chat-only fields filled in (no output, no features). */
export type ModelConfig = Omit<Static<typeof ModelSchema>, 'max_output_tokens' | 'features'> & {
  max_output_tokens: number
  features: Feature[]
}
export type ProviderConfig = Omit<Static<typeof ProviderSchema>, 'models'> & { models: ModelConfig[] }
export type PlanConfig = Static<typeof PlanSchema>
export type PricingConfig = Static<typeof PricingSchema>
/** A `service_tier` value billed at its own prices (`priority`, `flex`, `scale`). */
export type PricedTier = keyof NonNullable<PricingConfig['service_tier']>
/** A hosted tool billed per call (`web_search`, `file_search`, `code_interpreter`). */
export type PerCallTool = keyof NonNullable<PricingConfig['per_call']>
export type BudgetConfig = Static<typeof BudgetSchema>
export type TimeoutsConfig = Static<typeof TimeoutsSchema>
export type KeyConfig = Static<typeof KeySchema>
export type RawConfig = Static<typeof ConfigSchema>
