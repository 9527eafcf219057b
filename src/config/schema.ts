/**
 * @module
 * TypeBox schema of `switchyard.yaml`. Every object is closed (`additionalProperties: false`) so a
 * typo is an error instead of a silently ignored setting.
 */
import { type Static, Type as T, type TOptional, type TSchema } from '@sinclair/typebox'
import { MODEL_TYPES } from '../operations/operation.ts'
import { BUDGET_PERIODS, LIMIT_SETTINGS } from './limit-settings.ts'
import { AlertsSchema, TelemetrySchema } from './schema-signals.ts'

const Closed = { additionalProperties: false } as const

/**
 * A map whose every key must match `pattern`. `T.Record` alone becomes `patternProperties` only,
 * which never looks at a key outside the pattern (nor at its value), so the map is closed too.
 * `keyName` and `keyRule` word the error (schema-problems.ts).
 */
function NamedMap<V extends TSchema>(keyName: string, pattern: string, keyRule: string, value: V) {
  return T.Record(T.String({ pattern }), value, { additionalProperties: false, keyName, keyRule })
}

/** An HTTP field name (RFC 9110 token): anything else makes `new Headers()` throw on every request. */
const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"
/** A field value without CR, LF or NUL (which would end the header or be refused by fetch). */
const HEADER_VALUE = '^[^\\r\\n\\0]*$'

export const FEATURES = [
  'streaming',
  'tools',
  'parallel_tool_calls',
  'vision',
  'audio_input',
  'json_mode',
  'json_schema',
  'logprobs',
  'n',
  'system_messages',
  'reasoning',
  /** Continues a trailing assistant message (a stream cut mid-answer may be finished on it). */
  'prefill',
] as const
export type Feature = (typeof FEATURES)[number]

export const PROVIDER_KINDS = ['openai', 'anthropic', 'gemini', 'demo'] as const
export type ProviderKind = (typeof PROVIDER_KINDS)[number]

const PositiveInt = T.Integer({ minimum: 1 })
const NullableCount = T.Union([T.Integer({ minimum: 1 }), T.Null()])

/** The longest timer the runtime keeps: a longer `setTimeout` fires after 1 ms instead (about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1
/** A century: the longest plan or retention, as `--days` allows; every date it leads to is valid. */
export const MAX_DAYS = 36_500
/** `maxWhy` words the error past the maximum (schema-problems.ts). */
const TIMER_WHY = 'the longest timer the runtime keeps (2^31-1 ms, about 24.8 days)'
/** A duration in milliseconds, used as a timer. */
const Ms = T.Integer({ minimum: 1, maximum: MAX_TIMER_MS, maxWhy: TIMER_WHY })
/** A duration in seconds that becomes a timer: the same bound. */
const timerSeconds = (minimum: number) =>
  T.Integer({ minimum, maximum: Math.floor(MAX_TIMER_MS / 1000), maxWhy: TIMER_WHY })
/**
 * A duration in seconds that is only added to times (a circuit's or a key's rest, a suspension,
 * its window, a reservation's life), never a timer: a century at most, every date it leads to valid.
 */
const spanSeconds = (minimum: number) =>
  T.Integer({ minimum, maximum: MAX_DAYS * 86_400, maxWhy: 'a century, the longest plan' })
const Days = T.Integer({ minimum: 1, maximum: MAX_DAYS, maxWhy: 'a century, as --days allows' })

/** USD per 1M tokens; at most 6 decimals. Cached input defaults to input. */
const TierPricingSchema = T.Object(
  {
    input: T.Number({ minimum: 0 }),
    output: T.Number({ minimum: 0 }),
    cached_input: T.Optional(T.Number({ minimum: 0 })),
  },
  Closed,
)

/**
 * USD per 1M tokens (DESIGN §11); at most 6 decimals. Cached input, cache writes and reasoning
 * default to input, input and output. `service_tier`: the prices of a tier a request may ask for
 * (OpenAI's `priority`, `flex`, `scale`); `per_call`: USD per call of a hosted tool. What a request
 * asks beyond these is refused under a money limit (limits/surcharge.ts).
 */
export const PricingSchema = T.Object(
  {
    input: T.Number({ minimum: 0 }),
    output: T.Number({ minimum: 0 }),
    cached_input: T.Optional(T.Number({ minimum: 0 })),
    cache_write: T.Optional(T.Number({ minimum: 0 })),
    reasoning: T.Optional(T.Number({ minimum: 0 })),
    service_tier: T.Optional(
      T.Object(
        {
          priority: T.Optional(TierPricingSchema),
          flex: T.Optional(TierPricingSchema),
          scale: T.Optional(TierPricingSchema),
        },
        Closed,
      ),
    ),
    per_call: T.Optional(
      T.Object(
        {
          web_search: T.Optional(T.Number({ minimum: 0 })),
          file_search: T.Optional(T.Number({ minimum: 0 })),
          code_interpreter: T.Optional(T.Number({ minimum: 0 })),
        },
        Closed,
      ),
    ),
  },
  Closed,
)

/** Money per calendar period (UTC); at most 6 decimals. */
export const BudgetSchema = T.Object(
  { usd: T.Number({ exclusiveMinimum: 0 }), period: T.Union(BUDGET_PERIODS.map((p) => T.Literal(p))) },
  Closed,
)

export const ModelSchema = T.Object(
  {
    name: T.String({ minLength: 1, pattern: '^[^\\s]+$' }),
    /** Name sent upstream when it differs from `name`. */
    upstream_name: T.Optional(T.String({ minLength: 1 })),
    /** Default `chat`. Embedding models take neither `max_output_tokens` nor `features`. */
    type: T.Optional(T.Union(MODEL_TYPES.map((t) => T.Literal(t)))),
    context_window: PositiveInt,
    /** Required for chat models (checked at load with the model's type). */
    max_output_tokens: T.Optional(PositiveInt),
    /** Embedding models only: the vector length the model returns when `dimensions` is not sent. */
    dimensions: T.Optional(PositiveInt),
    temperature: T.Optional(
      T.Object({ min: T.Number({ minimum: 0 }), max: T.Number({ maximum: 2 }) }, Closed),
    ),
    /** Required for chat models (checked at load with the model's type). */
    features: T.Optional(T.Array(T.Union(FEATURES.map((f) => T.Literal(f))), { uniqueItems: true })),
    tier: T.Optional(T.String({ minLength: 1 })),
    description: T.Optional(T.String()),
    /**
     * Responses surface: what happens to hosted tools (`web_search`, `file_search`, ...) this model's
     * upstream cannot run. `reject` (default): 400 naming `tools[i]`; `drop`: left out, and named in
     * the `x-switchyard-dropped-tools` response header.
     */
    unsupported_tools: T.Optional(T.Union([T.Literal('reject'), T.Literal('drop')])),
    /**
     * The model cannot turn reasoning off (Gemini 2.5 Pro, Gemini 3 Pro): a request for no reasoning
     * (`reasoning_effort: "none"`) is refused by name instead of sent. Default false: "none" turns it
     * off (Gemini: `thinkingBudget: 0`; Anthropic: no `thinking`).
     */
    always_reasons: T.Optional(T.Boolean()),
    /** Absent: the model costs nothing (and `/v1/models` says so). */
    pricing: T.Optional(PricingSchema),
    /** `prefix/name` of configured models tried in order when this one fails (DESIGN §10). */
    fallbacks: T.Optional(T.Array(T.String({ pattern: '^[^/\\s]+/[^\\s]+$' }), { uniqueItems: true })),
  },
  Closed,
)

export const TimeoutsSchema = T.Object(
  {
    /** Until the upstream's response headers arrive (covers connecting). */
    first_byte_ms: T.Optional(Ms),
    /** Stream: from the headers until the first content-bearing event. */
    first_token_ms: T.Optional(Ms),
    /** Longest silence between two stream events. */
    idle_ms: T.Optional(Ms),
    /** Whole upstream exchange, stream included. */
    total_ms: T.Optional(Ms),
  },
  Closed,
)

/** One key of a provider's pool; `base_url` overrides the provider's for this key. */
export const KeySchema = T.Object(
  {
    api_key: T.String(),
    weight: T.Optional(PositiveInt),
    base_url: T.Optional(T.String({ pattern: '^https?://' })),
  },
  Closed,
)

/** `attempts` = retries of one target after its first try. */
export const RetrySchema = T.Object(
  {
    attempts: T.Optional(T.Integer({ minimum: 0, maximum: 10 })),
    backoff_ms: T.Optional(Ms),
    max_backoff_ms: T.Optional(Ms),
    max_retry_after_s: T.Optional(timerSeconds(0)),
  },
  Closed,
)

/** Per (key, model): `failures` consecutive failures skip the target for `cooldown_s`. */
export const CircuitSchema = T.Object(
  { failures: T.Optional(PositiveInt), cooldown_s: T.Optional(spanSeconds(1)) },
  Closed,
)

export const ProviderSchema = T.Object(
  {
    prefix: T.String({ minLength: 1, pattern: '^[A-Za-z0-9._-]+$' }),
    kind: T.Union(PROVIDER_KINDS.map((k) => T.Literal(k))),
    base_url: T.Optional(T.String({ pattern: '^https?://' })),
    api_key: T.Optional(T.String()),
    /** A key pool instead of the one `api_key`, spread by weight. */
    keys: T.Optional(T.Array(KeySchema, { minItems: 1 })),
    retry: T.Optional(RetrySchema),
    circuit: T.Optional(CircuitSchema),
    /** Extra headers sent upstream (e.g. OpenAI-Organization). */
    headers: T.Optional(
      NamedMap(
        'header name',
        HEADER_NAME,
        "letters, digits and !#$%&'*+.^_`|~- only",
        T.String({ pattern: HEADER_VALUE }),
      ),
    ),
    /**
     * OpenAI only: `responses` when the upstream also serves `POST /responses`, so Responses
     * requests pass through untranslated (hosted tools included). Default `chat`.
     */
    wire: T.Optional(T.Union([T.Literal('chat'), T.Literal('responses')])),
    /**
     * OpenAI only: the name the output-token limit is sent under. `max_completion_tokens` (default,
     * OpenAI's current name, required by its reasoning models); `max_tokens` for older compatible
     * servers that know only that name.
     */
    max_tokens_param: T.Optional(T.Union([T.Literal('max_completion_tokens'), T.Literal('max_tokens')])),
    /** Anthropic only: the `anthropic-version` header. */
    anthropic_version: T.Optional(T.String()),
    timeouts: T.Optional(TimeoutsSchema),
    /** Largest upstream JSON body, error body or single stream event; larger → 502. Default 32 MiB. */
    max_response_bytes: T.Optional(PositiveInt),
    models: T.Array(ModelSchema, { minItems: 1 }),
  },
  Closed,
)

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
          cors_origins: T.Optional(T.Array(T.String({ pattern: '^(\\*|https?://[^/\\s]+)$' }))),
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
          url: T.Optional(T.String({ pattern: '^postgres(ql)?://' })),
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
          token: T.Optional(T.String()),
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
          token: T.Optional(T.String()),
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
          redis_url: T.Optional(T.String({ pattern: '^rediss?://' })),
          /** What to do while the limiter's engine is unreachable: 503 (reject) or serve unlimited (allow). */
          on_unavailable: T.Optional(T.Union([T.Literal('reject'), T.Literal('allow')])),
          /**
           * A token or money reservation nobody settled (its process was killed mid-request) is
           * settled to nothing this long after its admission. Must exceed the longest a request
           * runs (every attempt and fallback included). Default 3600.
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
